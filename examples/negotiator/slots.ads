# Slot ads in the old ("condor_status -l") format; a blank line separates ads.
# node1: one idle slot.
Name = "slot1@node1.example.org"
Machine = "node1.example.org"
SlotID = 1
Cpus = 1
Memory = 2048
Arch = "X86_64"
OpSys = "LINUX"
State = "Unclaimed"
Activity = "Idle"
START = true
Requirements = START
Rank = 0

# node2: four slots running jobs of guest@visitor.org.
Name = "slot1@node2.example.org"
Machine = "node2.example.org"
SlotID = 1
Cpus = 1
Memory = 2048
Arch = "X86_64"
OpSys = "LINUX"
State = "Claimed"
Activity = "Busy"
RemoteUser = "guest@visitor.org"
RemoteOwner = "guest@visitor.org"
JobId = "3.0"
TotalJobRuntime = 3000
CurrentRank = 0.0
START = true
Requirements = START
Rank = 0

Name = "slot2@node2.example.org"
Machine = "node2.example.org"
SlotID = 2
Cpus = 1
Memory = 2048
Arch = "X86_64"
OpSys = "LINUX"
State = "Claimed"
Activity = "Busy"
RemoteUser = "guest@visitor.org"
RemoteOwner = "guest@visitor.org"
JobId = "3.1"
TotalJobRuntime = 100
CurrentRank = 0.0
START = true
Requirements = START
Rank = 0

Name = "slot3@node2.example.org"
Machine = "node2.example.org"
SlotID = 3
Cpus = 1
Memory = 2048
Arch = "X86_64"
OpSys = "LINUX"
State = "Claimed"
Activity = "Busy"
RemoteUser = "guest@visitor.org"
RemoteOwner = "guest@visitor.org"
JobId = "3.2"
TotalJobRuntime = 600
CurrentRank = 0.0
START = true
Requirements = START
Rank = 0

Name = "slot4@node2.example.org"
Machine = "node2.example.org"
SlotID = 4
Cpus = 1
Memory = 2048
Arch = "X86_64"
OpSys = "LINUX"
State = "Claimed"
Activity = "Busy"
RemoteUser = "guest@visitor.org"
RemoteOwner = "guest@visitor.org"
JobId = "3.3"
TotalJobRuntime = 50
CurrentRank = 0.0
START = true
Requirements = START
Rank = 0

# node3: only runs jobs of carol and bob, prefers carol's (machine RANK), and is
# running a job of bob's, which it ranks 0.
Name = "slot1@node3.example.org"
Machine = "node3.example.org"
SlotID = 1
Cpus = 1
Memory = 4096
Arch = "X86_64"
OpSys = "LINUX"
State = "Claimed"
Activity = "Busy"
RemoteUser = "bob@example.org"
RemoteOwner = "bob@example.org"
TotalJobRuntime = 7200
CurrentRank = 0.0
START = TARGET.Owner =?= "carol" || TARGET.Owner =?= "bob"
Requirements = START
Rank = ifThenElse(TARGET.Owner =?= "carol", 10, 0)
