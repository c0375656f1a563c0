//===- ChildEnvironment.h - The environment a child is started with -*- C++ -*-===//
//
// Harnesses start children with this process's environment and a few
// entries of their own (SLURM_CONF, a token file): those replace entries
// of the same name rather than sit beside them, since which of two a
// program reads is up to it. Plain POSIX and std, as ListeningChild.h.
//
//   std::vector<std::string> Env = environmentWith({"NAME=VALUE"});
//   execve(Path, Argv, pointersTo(Env).data());
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TOOLS_CHILDENVIRONMENT_H
#define CATALYST_REMOTE_TOOLS_CHILDENVIRONMENT_H

#include <string>
#include <vector>

namespace catalyst::remote::tools {

// This process's environment with Extra's NAME=VALUE entries replacing or
// adding to it, and without the variables Extra names bare (NAME).
std::vector<std::string> environmentWith(const std::vector<std::string> &Extra);

// Strings as the null-terminated array execve and posix_spawn take; valid
// while Strings is neither changed nor destroyed.
std::vector<char *> pointersTo(std::vector<std::string> &Strings);

} // namespace catalyst::remote::tools

#endif
