#pragma once
// The command line as data. kCommands (cli.cpp) is the one list of subcommands, like ninja's tool
// table: name, summary and the function that declares its options. Options shared by several
// commands (model, GPU count, layout, users, output format) come from one option-group function
// each, with their ranges as CLI11 validators, so `-n 0` or `--port 70000` is a usage error naming
// the option (exit 2) before any command runs. Each subcommand only fills a plain options struct;
// `action` calls the one run_<command>() that was selected. No computation happens here.
//
// The bash, zsh and fish completions and the man page are generated from the same parsed table
// (completion.cpp), so they cannot drift from what the parser accepts.
#include <CLI/CLI.hpp>
#include <functional>
#include <k3plan/catalogue.hpp>
#include <k3plan/report.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace k3plan {

struct GlobalOptions {
  std::vector<std::string> data_dirs;
  std::string format = "table";
  bool wide = false;             // tables as wide as their content (default: 100 columns)
  bool all_assumptions = false;  // list every assumption (default: the count and the first few)
};

// What completion scripts need beyond CLI11's own option data.
enum class ValueKind { word, file, directory };
struct OptionHints {
  ValueKind kind = ValueKind::word;
  std::vector<std::string> choices;  // fixed set of values (completed; also enforced by a validator)
};

struct Cli {
  CLI::App app{"k3plan: can this model be served on these GPUs, how many, at what context, cost and flags?", "k3plan"};
  GlobalOptions global;
  std::function<Report(const Catalogue&)> action;  // set by the selected subcommand's callback
  std::function<std::string()> text;               // commands that need no catalogue (completion, man)
  std::map<const CLI::Option*, OptionHints> hints;
  Cli();
  // Parses argv. Returns -1 when a command should run, else the exit code to return at once
  // (help and version: 0; usage errors: 2, reported as one line on stderr).
  int parse(int argc, char** argv);
};

// One row of the command table.
struct Command {
  const char* name;
  const char* summary;
  void (*define)(CLI::App& sub, Cli& cli);
};
const std::vector<Command>& command_table();

// Generated from the parsed table (completion.cpp).
std::string completion_script(const Cli& cli, const std::string& shell);  // bash, zsh or fish
std::string man_page(const Cli& cli);

}  // namespace k3plan
