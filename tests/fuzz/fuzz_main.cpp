// libFuzzer's entry point for one target, chosen at compile time
// (ULTIMA_FUZZ_TARGET, a function of fuzz_targets.h).
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ultima::fuzz::ULTIMA_FUZZ_TARGET(data, size);
}
