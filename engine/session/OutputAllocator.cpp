//===- OutputAllocator.cpp - Where host copies of outputs live ------------===//

#include "catalyst/remote/OutputAllocator.h"

#include <cstdlib>
#include <dlfcn.h>

namespace catalyst::remote {

OutputAllocator defaultOutputAllocator() {
  // Looked up at run time, not linked: Catalyst's runtime may be loaded
  // after this library, or not at all.
  if (void *Alloc = ::dlsym(RTLD_DEFAULT, "__catalyst__rt__alloc_managed")) {
    void *Release = ::dlsym(RTLD_DEFAULT, "__catalyst__rt__free_managed");
    return {reinterpret_cast<void *(*)(size_t)>(Alloc),
            reinterpret_cast<void (*)(void *)>(Release)};
  }
  return {&std::malloc, &std::free};
}

} // namespace catalyst::remote
