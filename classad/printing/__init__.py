"""How ads and values are printed: HTCondor's attribute orders and the writers of each
format (new syntax, old syntax, JSON).  The ad itself prints through these modules, so
they sit below :mod:`classad.ad`; the readers of :mod:`classad.formats` re-export them."""
