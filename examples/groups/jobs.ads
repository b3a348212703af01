# Job ads (old "condor_q -l" format); a blank line separates ads.

# higgs: 24 jobs with accounting_group = group_physics.hep
ClusterId = 1
ProcId = 0
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 1
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 2
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 3
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 4
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 5
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 6
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 7
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 8
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 9
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 10
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 11
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 12
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 13
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 14
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 15
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 16
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 17
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 18
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 19
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 20
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 21
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 22
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 1
ProcId = 23
Owner = "higgs"
User = "higgs@example.org"
AccountingGroup = "group_physics.hep.higgs"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

# fermi: 2 jobs without an accounting group (the map gives group_physics.lep)
ClusterId = 2
ProcId = 0
Owner = "fermi"
User = "fermi@example.org"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 2
ProcId = 1
Owner = "fermi"
User = "fermi@example.org"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

# curie: 12 jobs with accounting_group = group_chemistry
ClusterId = 3
ProcId = 0
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 3
ProcId = 1
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 3
ProcId = 2
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 3
ProcId = 3
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 3
ProcId = 4
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 3
ProcId = 5
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 3
ProcId = 6
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 3
ProcId = 7
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 3
ProcId = 8
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 3
ProcId = 9
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 3
ProcId = 10
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

ClusterId = 3
ProcId = 11
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_chemistry.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory

# curie again: one job claiming group_physics.hep, which the map does not allow her
ClusterId = 4
ProcId = 0
Owner = "curie"
User = "curie@example.org"
AccountingGroup = "group_physics.hep.curie"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory
