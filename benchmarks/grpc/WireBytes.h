//===- WireBytes.h - What a gRPC connection put on the wire -----*- C++ -*-===//
//
// gRPC does not say how many bytes a call cost on the wire, and its socket
// is out of reach. The kernel knows: this finds the process's TCP sockets
// connected to the server by their peer address and reads their byte
// counters (TCP_INFO), which include everything gRPC sent and received.
//
//===----------------------------------------------------------------------===//

#ifndef CATALYST_REMOTE_BENCH_GRPC_WIREBYTES_H
#define CATALYST_REMOTE_BENCH_GRPC_WIREBYTES_H

#include "KernelClient.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace catalyst::remote::grpcbench {

// An IP address and port. IPv4 addresses are kept IPv4-mapped: gRPC's
// dual-stack sockets report their peers that way.
struct Endpoint {
  std::array<uint8_t, 16> Addr;
  uint16_t Port;
  bool operator==(const Endpoint &O) const { return Addr == O.Addr && Port == O.Port; }
};

class ServerSockets {
public:
  // Resolves Address, "host:port" or "[v6]:port"; returns why it cannot.
  std::string resolve(const std::string &Address);

  // Sums the byte counters of every socket of this process connected to the
  // server; fails when there is none.
  std::string count(WireBytes &Total) const;

private:
  bool isServer(int Fd) const;

  std::string Address;
  std::vector<Endpoint> Peers;
};

} // namespace catalyst::remote::grpcbench

#endif
