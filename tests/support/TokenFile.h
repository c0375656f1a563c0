//===- TokenFile.h - A token file for one test ------------------*- C++ -*-===//
//
// A fresh secret in a private temporary folder, written by
// `catalyst-remote-executor --new-token` and removed with the folder when
// the object goes away.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_TESTS_TOKENFILE_H
#define CATALYST_REMOTE_TESTS_TOKENFILE_H

#include <string>

namespace catalyst::remote::test {

class TokenFile {
public:
  TokenFile();
  ~TokenFile();
  TokenFile(const TokenFile &) = delete;
  TokenFile &operator=(const TokenFile &) = delete;

  const std::string &path() const { return Path; }
  const std::string &secret() const { return Secret; }
  // The folder the file is in, for other files of the test.
  const std::string &dir() const { return Dir; }

private:
  std::string Dir, Path, Secret;
};

} // namespace catalyst::remote::test

#endif
