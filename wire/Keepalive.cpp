//===- Keepalive.cpp - Noticing a peer that vanished while idle -----------===//

#include "Keepalive.h"

#include "SysError.h"

#include <cerrno>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace catalyst::remote::wire {

llvm::Error enableKeepalive(int Fd) {
  struct Option {
    int Level, Name, Value;
    const char *Text;
  };
  for (const Option &O : {Option{SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE"},
                          Option{IPPROTO_TCP, TCP_KEEPIDLE, 30, "TCP_KEEPIDLE"},
                          Option{IPPROTO_TCP, TCP_KEEPINTVL, 10, "TCP_KEEPINTVL"},
                          Option{IPPROTO_TCP, TCP_KEEPCNT, 3, "TCP_KEEPCNT"}})
    if (::setsockopt(Fd, O.Level, O.Name, &O.Value, sizeof(O.Value)) != 0)
      return sysError(llvm::Twine("setting ") + O.Text, errno);
  return llvm::Error::success();
}

} // namespace catalyst::remote::wire
