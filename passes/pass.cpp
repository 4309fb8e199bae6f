#include "passes/pass.h"

#include "ir/assert.h"

namespace pb::passes {

const OptionValue& PassOptions::at(const std::string& name) const {
  auto it = values_.find(name);
  PB_ASSERT(it != values_.end(), "pass asked for undeclared option '" + name + "'");
  return it->second;
}

bool PassOptions::get_bool(const std::string& name) const {
  const auto* v = std::get_if<bool>(&at(name));
  PB_ASSERT(v, "option '" + name + "' is not a bool");
  return *v;
}
int64_t PassOptions::get_int(const std::string& name) const {
  const auto* v = std::get_if<int64_t>(&at(name));
  PB_ASSERT(v, "option '" + name + "' is not an int");
  return *v;
}
double PassOptions::get_float(const std::string& name) const {
  const auto* v = std::get_if<double>(&at(name));
  PB_ASSERT(v, "option '" + name + "' is not a float");
  return *v;
}
const std::string& PassOptions::get_string(const std::string& name) const {
  const auto* v = std::get_if<std::string>(&at(name));
  PB_ASSERT(v, "option '" + name + "' is not a string");
  return *v;
}

}  // namespace pb::passes
