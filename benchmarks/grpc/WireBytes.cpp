//===- WireBytes.cpp - What a gRPC connection put on the wire -------------===//

#include "WireBytes.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <linux/tcp.h>
#include <netdb.h>
#include <sys/socket.h>

namespace catalyst::remote::grpcbench {

namespace {

// False for families other than IPv4 and IPv6.
bool toEndpoint(const sockaddr *Sa, Endpoint &E) {
  if (Sa->sa_family == AF_INET6) {
    auto *In6 = reinterpret_cast<const sockaddr_in6 *>(Sa);
    std::memcpy(E.Addr.data(), &In6->sin6_addr, 16);
    E.Port = ntohs(In6->sin6_port);
    return true;
  }
  if (Sa->sa_family != AF_INET)
    return false;
  auto *In4 = reinterpret_cast<const sockaddr_in *>(Sa);
  E.Addr.fill(0);
  E.Addr[10] = E.Addr[11] = 0xff;
  std::memcpy(E.Addr.data() + 12, &In4->sin_addr, 4);
  E.Port = ntohs(In4->sin_port);
  return true;
}

// HOST and PORT of "HOST:PORT" or "[HOST]:PORT".
bool splitAddress(const std::string &Address, std::string &Host, std::string &Port) {
  size_t Colon = Address.rfind(':');
  if (Colon == std::string::npos || Colon + 1 == Address.size())
    return false;
  Host = Address.substr(0, Colon);
  Port = Address.substr(Colon + 1);
  if (Host.size() >= 2 && Host.front() == '[' && Host.back() == ']')
    Host = Host.substr(1, Host.size() - 2);
  return !Host.empty();
}

// Retransmitted bytes are left out: they are the link's doing, not gRPC's
// (this machine's loopback does retransmit now and then).
bool readCounters(int Fd, WireBytes &Out) {
  tcp_info Info{};
  socklen_t Len = sizeof(Info);
  if (getsockopt(Fd, IPPROTO_TCP, TCP_INFO, &Info, &Len) != 0)
    return false;
  // Kernels before 4.19 stop short of the last counter used.
  if (Len < offsetof(tcp_info, tcpi_bytes_retrans) + sizeof(Info.tcpi_bytes_retrans))
    return false;
  Out.Sent += Info.tcpi_bytes_sent - Info.tcpi_bytes_retrans;
  Out.Received += Info.tcpi_bytes_received;
  return true;
}

} // namespace

std::string ServerSockets::resolve(const std::string &Addr) {
  std::string Host, Port;
  if (!splitAddress(Addr, Host, Port))
    return "'" + Addr + "' is not HOST:PORT";
  addrinfo Hints{};
  Hints.ai_socktype = SOCK_STREAM;
  addrinfo *List = nullptr;
  if (int Rc = getaddrinfo(Host.c_str(), Port.c_str(), &Hints, &List))
    return "cannot resolve " + Addr + ": " + gai_strerror(Rc);
  Peers.clear();
  for (addrinfo *A = List; A; A = A->ai_next) {
    Endpoint E;
    if (toEndpoint(A->ai_addr, E))
      Peers.push_back(E);
  }
  freeaddrinfo(List);
  Address = Addr;
  return Peers.empty() ? "no IP address for " + Addr : std::string();
}

bool ServerSockets::isServer(int Fd) const {
  sockaddr_storage Peer{};
  socklen_t Len = sizeof(Peer);
  // Not a socket, or not a connected one: not ours.
  if (getpeername(Fd, reinterpret_cast<sockaddr *>(&Peer), &Len) != 0)
    return false;
  Endpoint E;
  return toEndpoint(reinterpret_cast<const sockaddr *>(&Peer), E) &&
         std::find(Peers.begin(), Peers.end(), E) != Peers.end();
}

std::string ServerSockets::count(WireBytes &Total) const {
  DIR *Fds = opendir("/proc/self/fd");
  if (!Fds)
    return std::string("cannot list /proc/self/fd: ") + std::strerror(errno);
  Total = {};
  int Found = 0;
  while (dirent *Entry = readdir(Fds)) {
    char *End = nullptr;
    long Fd = std::strtol(Entry->d_name, &End, 10);
    if (*End != '\0' || End == Entry->d_name || Fd == dirfd(Fds))
      continue;
    if (isServer(int(Fd)) && readCounters(int(Fd), Total))
      ++Found;
  }
  closedir(Fds);
  return Found ? std::string() : "no TCP connection to " + Address + " is open in this process";
}

} // namespace catalyst::remote::grpcbench
