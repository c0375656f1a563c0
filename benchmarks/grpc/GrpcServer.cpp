//===- GrpcServer.cpp - catalyst-remote-grpc-server: the gRPC baseline ----===//
//
// Serves kernel.proto's Kernel service, as a user would who runs a kernel in
// another process with gRPC: each Launch calls the benchmark's identity
// kernel (benchmarks/kernels/identity.c, linked in) through its pyface entry
// on a memref descriptor pointing at the request's bytes, and answers with
// the bytes of the descriptor the kernel returned.
//
//   catalyst-remote-grpc-server --listen HOST:PORT
//
// Once bound it prints `catalyst-remote-grpc-server: listening on HOST:PORT`
// on stdout, with the port the kernel chose for port 0, and nothing else
// there. It keeps nothing that needs a graceful shutdown: SIGTERM ends it.
//
//===----------------------------------------------------------------------===//

#include "../MemrefR1.h"
#include "kernel.grpc.pb.h"

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <grpcpp/grpcpp.h>
#include <memory>
#include <string>

extern "C" void identity(void *rv, void *av);

namespace {

using catalyst::remote::grpcbench::Kernel;
using catalyst::remote::grpcbench::Tensor;

constexpr const char *Name = "catalyst-remote-grpc-server";

using catalyst::remote::bench::MemrefR1;

grpc::Status invalid(const char *Why) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, Why);
}

class KernelService final : public Kernel::Service {
  grpc::Status Launch(grpc::ServerContext *, const Tensor *In, Tensor *Out) override {
    const std::string &Data = In->data();
    if (In->shape_size() != 1 || In->shape(0) != int64_t(Data.size()))
      return invalid("the kernel takes one rank-1 tensor of bytes, its shape its length");
    // The kernel reads the bytes where gRPC parsed them; it does not write
    // through its input.
    char *Bytes = const_cast<char *>(Data.data());
    MemrefR1 InDesc{Bytes, Bytes, 0, {In->shape(0)}, {1}};
    MemrefR1 OutDesc{};
    void *Args[] = {&InDesc};
    identity(&OutDesc, Args);
    if (OutDesc.Strides[0] != 1 || OutDesc.Sizes[0] < 0)
      return grpc::Status(grpc::StatusCode::INTERNAL, "the kernel returned a strided output");
    const char *OutBytes = static_cast<const char *>(OutDesc.Aligned) + OutDesc.Offset;
    Out->set_data(OutBytes, size_t(OutDesc.Sizes[0]));
    Out->add_shape(OutDesc.Sizes[0]);
    // A kernel that allocates its output, as an MLIR kernel returning a new
    // tensor does, hands that buffer over; identity's aliases its input.
    if (OutDesc.Allocated != InDesc.Allocated)
      std::free(OutDesc.Allocated);
    return grpc::Status::OK;
  }
};

// HOST of HOST:PORT, brackets of an IPv6 address kept, for the listening line.
std::string hostOf(const std::string &Address) {
  size_t Colon = Address.rfind(':');
  return Colon == std::string::npos ? Address : Address.substr(0, Colon);
}

int usage() {
  std::fprintf(stderr, "usage: %s --listen HOST:PORT\n", Name);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3 || std::strcmp(argv[1], "--listen") != 0)
    return usage();
  std::string Listen = argv[2];
  KernelService Service;
  grpc::ServerBuilder Builder;
  int Port = 0;
  Builder.AddListeningPort(Listen, grpc::InsecureServerCredentials(), &Port);
  // gRPC refuses messages over 4 MiB by default; INT_MAX is its own limit.
  Builder.SetMaxReceiveMessageSize(INT_MAX);
  Builder.SetMaxSendMessageSize(INT_MAX);
  Builder.RegisterService(&Service);
  std::unique_ptr<grpc::Server> Server = Builder.BuildAndStart();
  if (!Server || Port == 0) {
    std::fprintf(stderr, "%s: cannot listen on %s\n", Name, Listen.c_str());
    return 1;
  }
  std::printf("%s: listening on %s:%d\n", Name, hostOf(Listen).c_str(), Port);
  std::fflush(stdout);
  Server->Wait();
  return 0;
}
