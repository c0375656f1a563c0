//===- Sockets.h - What the kernel says about test sockets ------*- C++ -*-===//

#ifndef CATALYST_REMOTE_TESTS_SOCKETS_H
#define CATALYST_REMOTE_TESTS_SOCKETS_H

#include <cstdint>
#include <string>

namespace catalyst::remote::test {

// Payload bytes this process has sent so far over its TCP connections to
// Address ("127.0.0.1:port"), as the kernel counts them (TCP_INFO). Unlike
// the engine's own counters, this sees every byte, including those of a
// launch that failed: a test can tell that a failure cost no traffic. A
// process with no such connection fails the test: its session runs over
// something else (the local socket), which this cannot see.
uint64_t tcpBytesSentTo(const std::string &Address);

} // namespace catalyst::remote::test

#endif
