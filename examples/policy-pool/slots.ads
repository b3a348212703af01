# Five one-core slots (old "condor_status -l" format): four idle, one running carol's job.
Name = "slot1@node1.example.org"
SlotID = 1
Cpus = 1
Memory = 2048
State = "Unclaimed"
Activity = "Idle"
Requirements = true

Name = "slot2@node1.example.org"
SlotID = 2
Cpus = 1
Memory = 2048
State = "Unclaimed"
Activity = "Idle"
Requirements = true

Name = "slot1@node2.example.org"
SlotID = 1
Cpus = 1
Memory = 2048
State = "Unclaimed"
Activity = "Idle"
Requirements = true

Name = "slot2@node2.example.org"
SlotID = 2
Cpus = 1
Memory = 2048
State = "Unclaimed"
Activity = "Idle"
Requirements = true

Name = "slot3@node2.example.org"
SlotID = 3
Cpus = 1
Memory = 2048
State = "Claimed"
Activity = "Busy"
RemoteUser = "carol@example.org"
RemoteOwner = "carol@example.org"
JobId = "3.0"
Requirements = true
