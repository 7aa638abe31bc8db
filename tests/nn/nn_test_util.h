// Helpers shared by the tests of the network module (nn_tests): the module
// this build made, small architectures and temporary file names.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "nn/model_file.h"

namespace ultima::test {

// The module this build made, unless ULTIMA_NN_MODULE names another. Set
// before main(), so before any test loads the module.
inline const bool kNnModuleSet = [] {
  setenv("ULTIMA_NN_MODULE", ULTIMA_NN_TEST_MODULE, 0);
  return true;
}();

// A net of `blocks` residual blocks of 16 channels (SE 4) reading all the
// input planes (rows of nn::kInputSize floats), the other fields at their
// defaults: quick to run and to train.
inline nn::NetArchitecture narrow_architecture(int blocks) {
  nn::NetArchitecture a;
  a.input_planes = nn::kInputPlanes;
  a.blocks = blocks;
  a.channels = 16;
  a.se_channels = 4;
  return a;
}

// A path in the temporary directory, unique to this process.
inline std::string temp_path(const std::string& prefix, const std::string& name) {
  return (std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace ultima::test
