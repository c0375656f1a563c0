//===- MemberSource.cpp - Where a pool learns its members -----------------===//

#include "MemberSource.h"

namespace catalyst::remote::pool {

MemberSource::~MemberSource() = default;

} // namespace catalyst::remote::pool
