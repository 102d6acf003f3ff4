// Errors meant for the user of a command: the CLI prints the message and exits non-zero.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

namespace pas2p {

// Bad user input other than trace contents (flags, machine files, targets, ...).
// The message says what was wrong and, where it can, what to do instead.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

// The message of a caught exception kept as an exception_ptr (empty for one that is not a
// std::exception).
inline std::string WhatOf(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return {};
  }
}

}  // namespace pas2p
