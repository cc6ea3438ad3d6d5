#pragma once
// The input boundary: every file k3plan reads comes through read_input_file(), and every JSON text
// through parse_json_input() (YAML texts through YamlReader::parse, src/catalogue/yaml_reader.hpp,
// which applies the same limits). The same rules for every input kind:
// - regular files only: FIFOs, devices, sockets and directories are refused before any byte is
//   read (the file is opened O_NONBLOCK and checked with fstat, so a FIFO never blocks);
// - a size cap (limits.hpp), checked on the size and again while reading;
// - text: no NUL bytes, valid UTF-8 (RFC 3629); the error gives line, column and byte offset;
// - JSON: nesting cap, duplicate keys refused, non-finite numbers (1e400) refused, each naming the
//   field and, where the text shows it, the line and column.
// Every failure is an InputError whose one line names the file (exit 2).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <k3plan/limits.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace k3plan {

// `what` names the kind of input in messages ("deployment file", "config.json", "engine log").
std::string read_input_file(const std::string& path, const char* what, std::size_t max_bytes = limits::kMaxInputBytes);
// Raw bytes (safetensors headers): the same file checks, no text checks.
std::string read_input_bytes(const std::string& path, const char* what, std::size_t max_bytes);

// The leading bytes of a file too large to read whole (a safetensors shard of many GB), with the
// same file checks (regular file, opened non-blocking) and no size cap on the file itself.
class InputFileHead {
 public:
  InputFileHead(const std::string& path, const char* what);
  ~InputFileHead();
  InputFileHead(const InputFileHead&) = delete;
  InputFileHead& operator=(const InputFileHead&) = delete;
  std::uint64_t size() const { return size_; }
  // The next n bytes, fewer only at the end of the file; never allocates beyond the file's size.
  std::string read(std::size_t n);

 private:
  std::string path_;
  const char* what_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// Refuses NUL bytes and invalid UTF-8, naming origin:line:column and the byte offset.
void check_text(std::string_view text, const std::string& origin, const char* what);

inline constexpr int kMaxJsonDepth = 128;
// Parses JSON with the limits above; malformed JSON names the line and column.
nlohmann::json parse_json_input(const std::string& text, const std::string& origin, int max_depth = kMaxJsonDepth);

// Field types of a JSON object, checked where the reader knows them: a present, non-null field of
// another type is "origin: field 'prefix.key': expected a string, got a number".
enum class JsonType { string, number, integer, boolean, object, array };
struct JsonField {
  const char* key;
  JsonType type;
};
void check_json_types(const nlohmann::json& obj, std::initializer_list<JsonField> fields, const std::string& origin,
                      const std::string& prefix = "");

// The 1-based column in code points (SARIF's columnKind unicodeCodePoints, what findings print) of
// a 1-based byte column in `line` (yaml-cpp marks count bytes).
int code_point_column(std::string_view line, int byte_column);

// 1-based line and column (in bytes) of a byte offset.
struct TextPos {
  int line = 1, column = 1;
};
TextPos text_pos(std::string_view text, std::size_t offset);

}  // namespace k3plan
