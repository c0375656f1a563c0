//===- ChildEnvironment.cpp - The environment a child is started with -----===//

#include "ChildEnvironment.h"

extern char **environ;

namespace catalyst::remote::tools {

std::vector<std::string> environmentWith(const std::vector<std::string> &Extra) {
  std::vector<std::string> Env;
  for (char **E = environ; *E; ++E) {
    std::string Entry = *E;
    size_t Eq = Entry.find('=');
    std::string Name = Entry.substr(0, Eq == std::string::npos ? Entry.size() : Eq + 1);
    bool Replaced = false;
    for (const std::string &X : Extra)
      Replaced |=
          Eq != std::string::npos && (X.compare(0, Name.size(), Name) == 0 || X + "=" == Name);
    if (!Replaced)
      Env.push_back(Entry);
  }
  for (const std::string &X : Extra)
    if (X.find('=') != std::string::npos)
      Env.push_back(X);
  return Env;
}

std::vector<char *> pointersTo(std::vector<std::string> &Strings) {
  std::vector<char *> Ptrs;
  for (std::string &S : Strings)
    Ptrs.push_back(S.data());
  Ptrs.push_back(nullptr);
  return Ptrs;
}

} // namespace catalyst::remote::tools
