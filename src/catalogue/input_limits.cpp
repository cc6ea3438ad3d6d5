// Generic input limits for every file k3plan reads from a user (deployment files, manifests,
// launch scripts): a size cap, text-only (valid UTF-8, no control bytes) and a nesting cap, checked
// before a YAML parser sees the text. `check` and `launch` read through the same functions.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <k3plan/error.hpp>
#include <k3plan/input_file.hpp>
#include <k3plan/input_limits.hpp>
#include <k3plan/output_file.hpp>
#include <sstream>
#include <vector>

namespace k3plan {

namespace fs = std::filesystem;

namespace {


std::size_t leading_spaces(const std::string& line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return i;
}

// True when a line's content (after the key or "- ") opens a block scalar: `|`, `>`, `|-`, `>+2`...
bool opens_block_scalar(const std::string& line) {
  std::size_t end = line.size();
  const auto hash = line.find(" #");
  if (hash != std::string::npos) end = hash;
  while (end > 0 && (line[end - 1] == ' ' || line[end - 1] == '\t' || line[end - 1] == '\r')) --end;
  std::size_t k = end;
  while (k > 0 && (line[k - 1] == '-' || line[k - 1] == '+' || std::isdigit(static_cast<unsigned char>(line[k - 1])))) --k;
  if (k == 0 || (line[k - 1] != '|' && line[k - 1] != '>')) return false;
  if (k - 1 == 0) return true;
  const char before = line[k - 2];
  return before == ' ' || before == ':' || before == '-';
}

}  // namespace

void check_yaml_limits(const std::string& text, const std::string& origin, std::size_t max_bytes, int max_depth) {
  if (text.size() > max_bytes)
    throw InputError(
        fmt::format("{}: {} bytes: larger than the {} MiB limit for this kind of file", origin, text.size(), max_bytes / (1024 * 1024)));
  // binary data: NUL, control characters other than tab/newline/CR, DEL, or invalid UTF-8
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F)
      throw InputError(fmt::format("{}: binary data (byte 0x{:02x} at offset {}), not a YAML text file", origin, c, i));
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0) throw InputError(fmt::format("{}: binary data (invalid UTF-8 at offset {}), not a YAML text file", origin, i));
    i += n;
  }
  // nesting: flow brackets + block indentation levels + compact "- - -" / "? " markers
  std::vector<std::size_t> indents;
  int flow = 0;
  bool in_double = false, in_single = false;
  std::size_t block_scalar_indent = std::string::npos;  // lines indented deeper belong to a block scalar
  int line_no = 0;
  std::istringstream in(text);
  std::string line;
  auto too_deep = [&](int depth) {
    if (depth > max_depth)
      throw InputError(fmt::format("{}:{}: nesting deeper than {} levels; a deployment file needs a handful", origin, line_no, max_depth));
  };
  while (std::getline(in, line)) {
    ++line_no;
    const std::size_t ind = leading_spaces(line);
    const bool blank = ind == line.size() || line[ind] == '#' || line[ind] == '\r';
    if (block_scalar_indent != std::string::npos) {
      if (blank || ind > block_scalar_indent) continue;
      block_scalar_indent = std::string::npos;
    }
    if (blank && !in_double && !in_single) continue;
    if (flow == 0 && !in_double && !in_single) {
      while (!indents.empty() && indents.back() > ind) indents.pop_back();
      if (indents.empty() || indents.back() < ind) indents.push_back(ind);
    }
    // compact nested sequences / complex keys on one line: "- - - x", "? - x"
    int compact = 0;
    std::size_t k = ind;
    while (k + 1 < line.size() && (line[k] == '-' || line[k] == '?') && (line[k + 1] == ' ' || line[k + 1] == '\t')) {
      ++compact;
      k += 2;
      while (k < line.size() && line[k] == ' ') ++k;
    }
    int peak = flow;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      const char prev = i == 0 ? ' ' : line[i - 1];
      if (in_double) {
        if (c == '\\')
          ++i;
        else if (c == '"')
          in_double = false;
        continue;
      }
      if (in_single) {
        if (c == '\'') {
          if (i + 1 < line.size() && line[i + 1] == '\'')
            ++i;
          else
            in_single = false;
        }
        continue;
      }
      const bool token_start = prev == ' ' || prev == '\t' || prev == '[' || prev == '{' || prev == ',' || prev == ':' || i == 0;
      if (c == '#' && (prev == ' ' || prev == '\t' || i == 0)) break;
      if (c == '"' && token_start)
        in_double = true;
      else if (c == '\'' && token_start)
        in_single = true;
      else if (c == '[' || c == '{')
        peak = std::max(peak, ++flow);
      else if ((c == ']' || c == '}') && flow > 0)
        --flow;
    }
    too_deep(static_cast<int>(indents.size()) + compact + peak);
    if (flow == 0 && !in_double && !in_single && opens_block_scalar(line)) block_scalar_indent = ind;
  }
}

std::string read_capped(const std::string& path, std::size_t max_bytes, const char* what) {
  // the input boundary (input_file.hpp): regular files only, checked on the open descriptor (a FIFO
  // never blocks), the size cap checked before and while reading
  std::string text = read_input_bytes(path, what, max_bytes);
  if (text.find('\0') != std::string::npos) throw InputError(fmt::format("{}: binary data, not a {}", path, what));
  return text;
}

std::string read_yaml_input(const std::string& path, const char* what, std::size_t max_bytes) {
  std::string text = read_capped(path, max_bytes, what);
  check_yaml_limits(text, path, max_bytes);
  return text;
}

}  // namespace k3plan
