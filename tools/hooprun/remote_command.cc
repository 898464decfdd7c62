#include "hooprun/remote_command.h"

#include <algorithm>

namespace hoop::run {

std::string shellQuote(std::string_view word) {
  // Characters no POSIX shell treats specially inside a word ('=' and ':' included, so
  // NAME=value assignments stay readable; '~' is left out because it expands at a word start,
  // and a leading '=' is quoted because zsh expands "=cmd" to the path of cmd).
  auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_-+=.,/:@%").find(c) != std::string_view::npos;
  };
  if (!word.empty() && word.front() != '=' && std::all_of(word.begin(), word.end(), safe)) {
    return std::string(word);
  }
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

std::vector<std::string> remoteShellCommand(const char* hoop_rsh) {
  std::vector<std::string> words;
  std::string_view text = hoop_rsh ? hoop_rsh : "";
  size_t pos = 0;
  while ((pos = text.find_first_not_of(" \t\n", pos)) != std::string_view::npos) {
    size_t end = text.find_first_of(" \t\n", pos);
    if (end == std::string_view::npos) end = text.size();
    words.emplace_back(text.substr(pos, end - pos));
    pos = end;
  }
  if (words.empty()) words = {"ssh", "-o", "BatchMode=yes"};
  return words;
}

std::string remoteScript(const std::string& cwd, const std::vector<EnvVar>& env,
                         const std::vector<std::string>& program) {
  std::string script = "cd " + shellQuote(cwd) + " 2>/dev/null; ";
  // `read` fails (and the rank exits 1) if hooprun's stdin pipe closed before the secret line.
  script += "read -r HOOP_SECRET && export HOOP_SECRET && exec env";
  for (const EnvVar& var : env) script += " " + shellQuote(var.name + "=" + var.value);
  for (const std::string& word : program) script += " " + shellQuote(word);
  return script;
}

std::vector<std::string> remoteArgv(const std::vector<std::string>& rsh, const std::string& host,
                                    const std::string& script) {
  std::vector<std::string> argv = rsh;
  argv.push_back(host);
  argv.push_back(script);
  return argv;
}

}  // namespace hoop::run
