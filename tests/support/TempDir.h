//===- TempDir.h - A private folder for one test ----------------*- C++ -*-===//
//
// Made by mkdtemp (mode 0700) under the temporary directory, and removed
// with everything in it when the object goes away.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_TEMPDIR_H
#define CATALYST_REMOTE_TESTS_TEMPDIR_H

#include <string>

namespace catalyst::remote::test {

class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  std::string path(const std::string &Name) const { return Dir + "/" + Name; }
  const std::string &dir() const { return Dir; }

private:
  std::string Dir;
};

} // namespace catalyst::remote::test

#endif
