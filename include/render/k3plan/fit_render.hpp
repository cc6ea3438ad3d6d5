#pragma once
// How one fit reads (src/render/fit_render.cpp): the JSON of a FitResult, the per-GPU budget table
// and a launch command as copyable shell lines; `k3plan fit` (src/commands/fit_cmd.cpp) puts them
// in its Report.
#include <k3plan/budget.hpp>
#include <k3plan/report.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace k3plan {

// Every figure of a fit, units in the keys (the `fit -g GPU --format json` shape).
nlohmann::json fit_json(const FitResult& f);

// The per-GPU memory budget of the limiting stage, in GiB, GB and share of what the engine sees.
Table budget_table(const FitResult& f);

// "prog --a 1 --b 2" as lines of one shell command: the program (already shell text), then one
// "--flag value" per line, each word shell_word()ed (a JSON value such as --limit-mm-per-prompt's
// comes out single-quoted), each line but the last ending in " \\".
std::vector<std::string> shell_lines(const std::string& program, const std::vector<std::string>& words,
                                     const std::vector<std::string>& env = {});
// The same command on one line, after its NAME=value environment words.
std::string shell_command(const std::string& program, const std::vector<std::string>& words, const std::vector<std::string>& env = {});

}  // namespace k3plan
