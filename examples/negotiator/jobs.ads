# Job ads in the old ("condor_q -l") format; a blank line separates ads.
# alice@example.org: three idle jobs.
ClusterId = 1
ProcId = 0
Owner = "alice"
User = "alice@example.org"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Arch == "X86_64" && TARGET.Memory >= RequestMemory
Rank = 0

ClusterId = 1
ProcId = 1
Owner = "alice"
User = "alice@example.org"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Arch == "X86_64" && TARGET.Memory >= RequestMemory
Rank = 0

ClusterId = 1
ProcId = 2
Owner = "alice"
User = "alice@example.org"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Arch == "X86_64" && TARGET.Memory >= RequestMemory
Rank = 0

# carol@example.org: one idle job.
ClusterId = 2
ProcId = 0
Owner = "carol"
User = "carol@example.org"
JobStatus = 1
RequestCpus = 1
RequestMemory = 1024
Requirements = TARGET.OpSys == "LINUX" && TARGET.Memory >= RequestMemory
Rank = 0

# guest@visitor.org: four running jobs (on node2) and one idle job.
ClusterId = 3
ProcId = 0
Owner = "guest"
User = "guest@visitor.org"
JobStatus = 2
RequestCpus = 1
RequestMemory = 512
Requirements = TARGET.OpSys == "LINUX"

ClusterId = 3
ProcId = 1
Owner = "guest"
User = "guest@visitor.org"
JobStatus = 2
RequestCpus = 1
RequestMemory = 512
Requirements = TARGET.OpSys == "LINUX"

ClusterId = 3
ProcId = 2
Owner = "guest"
User = "guest@visitor.org"
JobStatus = 2
RequestCpus = 1
RequestMemory = 512
Requirements = TARGET.OpSys == "LINUX"

ClusterId = 3
ProcId = 3
Owner = "guest"
User = "guest@visitor.org"
JobStatus = 2
RequestCpus = 1
RequestMemory = 512
Requirements = TARGET.OpSys == "LINUX"

ClusterId = 3
ProcId = 4
Owner = "guest"
User = "guest@visitor.org"
JobStatus = 1
RequestCpus = 1
RequestMemory = 512
Requirements = TARGET.OpSys == "LINUX"
