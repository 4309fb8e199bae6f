// User-facing errors: a located message with an optional remedy, carried as a value or thrown
// as UserError up to the face (CLI, GUI) that shows it.
#pragma once

#include <stdexcept>
#include <string>

namespace pb {

struct Diagnostic {
  std::string file;  // may be empty
  int line = 0;      // 1-based; 0 when there is no location
  int column = 0;    // 1-based
  std::string message;
  std::string source_line;  // the offending line, shown under the message
  std::string remedy;       // what the user can do about it; may be empty

  static Diagnostic plain(std::string message, std::string remedy = {}) {
    Diagnostic d;
    d.message = std::move(message);
    d.remedy = std::move(remedy);
    return d;
  }
  // "file:line:col: error: message" plus the source line with a caret, plus the remedy.
  std::string format() const;
};

class UserError : public std::runtime_error {
 public:
  explicit UserError(Diagnostic d) : std::runtime_error(d.format()), diag_(std::move(d)) {}
  explicit UserError(const std::string& message, const std::string& remedy = {})
      : UserError(Diagnostic::plain(message, remedy)) {}
  const Diagnostic& diagnostic() const { return diag_; }

 private:
  Diagnostic diag_;
};

// A kernel that breaks a rule a checking pass enforces (the global data access rule): the check
// failed, as a verifier error does (exit 1 in the CLI), rather than the input being unusable.
class RuleViolation : public UserError {
 public:
  using UserError::UserError;
};

}  // namespace pb
