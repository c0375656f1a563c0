#include "Transfer.h"

namespace catalyst::remote {
Transfer::~Transfer() = default;
} // namespace catalyst::remote
