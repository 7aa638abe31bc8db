// Where the program finds what ships with it: the levels, bots, puzzles,
// learned-evaluation networks and run configs under configs/, and the
// network module. One rule for all of them, so a build folder, an
// installed copy (`cmake --install`) and a moved copy behave alike.
#pragma once

#include <string>

namespace ultima {

// The folder of the running program (/proc/self/exe's, symlinks resolved).
std::string program_directory();

// The shipped file or folder `relative` ("configs/levels") from the first
// of these where it exists:
//   1. $ULTIMA_DATA/relative (a copy of the data anywhere);
//   2. PREFIX/share/ultima/relative for a program installed in PREFIX/bin;
//   3. the source tree's, for a program (or test) run from its build folder
//      (an installed or moved copy never reads the source tree);
//   4. relative to the working directory.
// When none exists, the last (so an error names a path the user can fix).
// Each kind of data also has its own variable (ULTIMA_LEVELS, ULTIMA_BOTS,
// ULTIMA_PUZZLES, ULTIMA_COURSE, ULTIMA_NNUE), read before this by its own lookup.
std::string data_path(const std::string& relative);

}  // namespace ultima
