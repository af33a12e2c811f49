#include <dsm/balancer.hpp>

#include <stdexcept>
#include <string>

namespace dsm::lb {
namespace {

struct Named {
  const char* name;
  Policy policy;
};
constexpr Named policies[] = {{"static", Policy::static_blocks}, {"shift", Policy::shift},
                              {"multi", Policy::multi},          {"locality", Policy::locality},
                              {"fgdls", Policy::fgdls},          {"auto", Policy::automatic}};

}  // namespace

Policy parse_policy(const std::string& name, const std::string& what) {
  for (const Named& p : policies)
    if (name == p.name) return p.policy;
  throw std::invalid_argument(what + "=" + name +
                              ": unknown balancing policy (static|shift|multi|locality|fgdls|auto)");
}

const char* policy_name(Policy p) {
  for (const Named& n : policies)
    if (n.policy == p) return n.name;
  return "?";
}

}  // namespace dsm::lb
