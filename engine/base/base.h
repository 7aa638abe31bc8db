// The base layer's public header: what every layer above may use and that
// knows nothing of the game. The one writer of files (file_io.h), text
// helpers (text.h), the process-wide stop (stop.h) and where shipped data
// is found (paths.h). Only the standard library.
#pragma once

#include "engine/base/file_io.h"
#include "engine/base/paths.h"
#include "engine/base/stop.h"
#include "engine/base/text.h"
