// The command line that starts one rank on another host through ssh (or HOOP_RSH).
//
// The remote side runs, in the user's login shell (assumed POSIX: sh, bash, dash, zsh):
//
//   cd /launch/dir 2>/dev/null; read -r HOOP_SECRET && export HOOP_SECRET &&
//     exec env HOOP_RANK=2 ... prog 'arg 1'
//
// The secret is not on any command line (ps on either machine would show it): hooprun writes
// it, one line, to the ssh client's stdin, and the remote shell's `read` builtin takes it from
// there. Every word is quoted for the remote shell, so arguments reach prog unchanged.
//
// Stopping a remote rank signals the local ssh client. Without a terminal (no -t), sshd then
// closes the session and the remote program learns of it only when it next writes (SIGPIPE) or
// reads its stdin; a hoop rank also notices its peers dropping. A remote watchdog that kills the
// program when the session ends is left for the multi-host work.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hooprun/env_var.h"

namespace hoop::run {

// Quotes one word for a POSIX shell: words made only of safe characters stay as they are,
// others are single-quoted with each ' written as '\''.
std::string shellQuote(std::string_view word);

// The remote-shell command: HOOP_RSH split on blanks (no shell syntax), or
// "ssh -o BatchMode=yes" when HOOP_RSH is unset or blank. BatchMode makes ssh fail instead of
// prompting for a password that nobody would see.
std::vector<std::string> remoteShellCommand(const char* hoop_rsh);

// The script above. `cwd` is hooprun's working directory; the remote side tries to enter it
// (shared filesystems) and stays in the login directory when it does not exist there.
std::string remoteScript(const std::string& cwd, const std::vector<EnvVar>& env,
                         const std::vector<std::string>& program);

// rsh... HOST SCRIPT: the argv hooprun executes locally for a remote rank.
std::vector<std::string> remoteArgv(const std::vector<std::string>& rsh, const std::string& host,
                                    const std::string& script);

}  // namespace hoop::run
