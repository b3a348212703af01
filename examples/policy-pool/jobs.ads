# Jobs (old "condor_q -l" format).  The cycle runs at --now 1700000000.
# alice: three idle jobs queued an hour ago.
ClusterId = 1
ProcId = 0
Owner = "alice"
User = "alice@example.org"
JobStatus = 1
RequestCpus = 1
QDate = 1699996400
Requirements = true

ClusterId = 1
ProcId = 1
Owner = "alice"
User = "alice@example.org"
JobStatus = 1
RequestCpus = 1
QDate = 1699996400
Requirements = true

ClusterId = 1
ProcId = 2
Owner = "alice"
User = "alice@example.org"
JobStatus = 1
RequestCpus = 1
QDate = 1699996400
Requirements = true

# bob: two idle jobs queued ten minutes ago, at DIRAC priority 5.
ClusterId = 2
ProcId = 0
Owner = "bob"
User = "bob@example.org"
JobStatus = 1
RequestCpus = 1
QDate = 1699999400
DiracPriority = 5
Requirements = true

ClusterId = 2
ProcId = 1
Owner = "bob"
User = "bob@example.org"
JobStatus = 1
RequestCpus = 1
QDate = 1699999400
DiracPriority = 5
Requirements = true

# carol: one job running for two hours, two idle jobs queued two hours ago.
ClusterId = 3
ProcId = 0
Owner = "carol"
User = "carol@example.org"
JobStatus = 2
RequestCpus = 1
QDate = 1699992800
EnteredCurrentStatus = 1699992800
RemoteWallClockTime = 7200
Requirements = true

ClusterId = 4
ProcId = 0
Owner = "carol"
User = "carol@example.org"
JobStatus = 1
RequestCpus = 1
QDate = 1699992800
Requirements = true

ClusterId = 4
ProcId = 1
Owner = "carol"
User = "carol@example.org"
JobStatus = 1
RequestCpus = 1
QDate = 1699992800
Requirements = true
