// qlac's subcommands.
#ifndef QLA_TOOLS_QLAC_COMMANDS_H
#define QLA_TOOLS_QLAC_COMMANDS_H

#include <string>
#include <vector>

namespace qlac {
using Args = std::vector<std::string>;
int compileCommand(const Args &args);
int dumpCommand(const Args &args);
int passesCommand(const Args &args);
int checkCommand(const Args &args);
int cacheCommand(const Args &args);
int tuneCommand(const Args &args);
int loadCommand(const Args &args);
} // namespace qlac

#endif
