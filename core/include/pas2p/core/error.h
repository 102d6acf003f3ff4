// Errors meant for the user of a command: the CLI prints the message and exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace pas2p {

// Bad user input other than trace contents (flags, machine files, targets, ...).
// The message says what was wrong and, where it can, what to do instead.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace pas2p
