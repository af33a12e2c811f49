#include "symbolic.hpp"

#include <algorithm>

namespace dsmpass {
namespace {

void add_term(Poly& p, const std::vector<std::string>& mono, long c) {
  long& slot = p.terms[mono];
  slot += c;
  if (slot == 0) p.terms.erase(mono);
}

// Symbols are printed as written; anything beyond a name or member access is parenthesized
// so that it binds as one factor.
std::string factor(const std::string& s) {
  const bool simple = std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == ':' ||
           ch == '>' || ch == '-' || ch == '[' || ch == ']';
  });
  const bool has_minus = s.find('-') != std::string::npos && s.find("->") == std::string::npos;
  return simple && !has_minus ? s : "(" + s + ")";
}

}  // namespace

Poly Poly::constant(long c) {
  Poly p;
  if (c != 0) p.terms[{}] = c;
  return p;
}

Poly Poly::symbol(const std::string& text) {
  Poly p;
  p.terms[{text}] = 1;
  return p;
}

std::optional<long> Poly::as_constant() const {
  if (terms.empty()) return 0;
  if (terms.size() == 1 && terms.begin()->first.empty()) return terms.begin()->second;
  return std::nullopt;
}

std::string Poly::str() const {
  if (terms.empty()) return "0";
  std::string out;
  // Symbolic terms first (std::map puts the constant, the empty product, first).
  std::vector<std::pair<std::vector<std::string>, long>> order(terms.begin(), terms.end());
  std::stable_partition(order.begin(), order.end(), [](const auto& t) { return !t.first.empty(); });
  for (const auto& [mono, c] : order) {
    const long mag = c < 0 ? -c : c;
    if (out.empty())
      out += c < 0 ? "-" : "";
    else
      out += c < 0 ? " - " : " + ";
    std::string body;
    for (const auto& s : mono) {
      if (!body.empty()) body += '*';
      body += factor(s);
    }
    if (body.empty() || mag != 1) out += std::to_string(mag);
    if (!body.empty() && mag != 1) out += '*';
    out += body;
  }
  return out;
}

Poly operator+(const Poly& a, const Poly& b) {
  Poly r = a;
  for (const auto& [m, c] : b.terms) add_term(r, m, c);
  return r;
}
Poly operator-(const Poly& a) {
  Poly r;
  for (const auto& [m, c] : a.terms) r.terms[m] = -c;
  return r;
}
Poly operator-(const Poly& a, const Poly& b) { return a + (-b); }
Poly operator*(const Poly& a, const Poly& b) {
  Poly r;
  for (const auto& [ma, ca] : a.terms)
    for (const auto& [mb, cb] : b.terms) {
      std::vector<std::string> m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      add_term(r, m, ca * cb);
    }
  return r;
}
bool operator==(const Poly& a, const Poly& b) { return a.terms == b.terms; }

Affine Affine::invariant(const Poly& p) {
  Affine a;
  if (!p.is_zero()) a.parts[""] = p;
  return a;
}
Affine Affine::variable(const std::string& name) {
  Affine a;
  a.parts[name] = Poly::constant(1);
  return a;
}
Poly Affine::coef(const std::string& var) const {
  auto it = parts.find(var);
  return it == parts.end() ? Poly{} : it->second;
}
bool Affine::has_variables() const {
  return std::any_of(parts.begin(), parts.end(), [](const auto& p) { return !p.first.empty(); });
}

Affine operator+(const Affine& a, const Affine& b) {
  Affine r = a;
  for (const auto& [v, c] : b.parts) {
    Poly sum = r.coef(v) + c;
    if (sum.is_zero())
      r.parts.erase(v);
    else
      r.parts[v] = sum;
  }
  return r;
}
Affine operator-(const Affine& a) {
  Affine r;
  for (const auto& [v, c] : a.parts) r.parts[v] = -c;
  return r;
}
std::optional<Affine> operator*(const Affine& a, const Affine& b) {
  if (a.has_variables() && b.has_variables()) return std::nullopt;
  const Affine& scaled = a.has_variables() ? a : b;
  const Poly k = (a.has_variables() ? b : a).coef("");
  Affine r;
  for (const auto& [v, c] : scaled.parts) {
    Poly p = c * k;
    if (!p.is_zero()) r.parts[v] = p;
  }
  return r;
}

Bound Bound::of(const Poly& p) { return Bound{p, p.str(), p}; }
Bound Bound::opaque(std::string text) { return Bound{std::nullopt, std::move(text)}; }

namespace {

Bound with_large(Bound b, const std::optional<Poly>& large) {
  b.large = large;
  return b;
}

// The smaller (or larger) of two values once the symbols are large.
std::optional<Poly> large_pick(const Bound& a, const Bound& b, bool smaller) {
  if (!a.large || !b.large) return std::nullopt;
  const auto sign = sign_when_large(*a.large - *b.large);
  if (!sign) return std::nullopt;
  return (*sign <= 0) == smaller ? a.large : b.large;
}

}  // namespace

std::optional<int> sign_when_large(const Poly& p) {
  std::string symbol;
  size_t degree = 0;
  long leading = 0;
  for (const auto& [product, coef] : p.terms) {
    for (const std::string& s : product) {
      if (!symbol.empty() && s != symbol) return std::nullopt;
      symbol = s;
    }
    if (product.size() >= degree) degree = product.size(), leading = coef;
  }
  return leading > 0 ? 1 : leading < 0 ? -1 : 0;
}

Bound operator+(const Bound& a, const Bound& b) {
  if (a.poly && b.poly) return Bound::of(*a.poly + *b.poly);
  if (a.poly && a.poly->is_zero()) return b;
  if (b.poly && b.poly->is_zero()) return a;
  return with_large(Bound::opaque(a.text + " + " + b.text),
                    a.large && b.large ? std::optional<Poly>(*a.large + *b.large) : std::nullopt);
}

std::optional<long> difference(const Bound& a, const Bound& b) {
  if (!a.poly || !b.poly) return a.text == b.text ? std::optional<long>(0) : std::nullopt;
  return (*a.poly - *b.poly).as_constant();
}

Bound min(const Bound& a, const Bound& b) {
  if (auto d = difference(a, b)) return *d <= 0 ? a : b;
  return with_large(Bound::opaque("std::min<long>(" + a.text + ", " + b.text + ")"), large_pick(a, b, true));
}
Bound max(const Bound& a, const Bound& b) {
  if (auto d = difference(a, b)) return *d >= 0 ? a : b;
  return with_large(Bound::opaque("std::max<long>(" + a.text + ", " + b.text + ")"), large_pick(a, b, false));
}

std::pair<Bound, Bound> scale(const Poly& c, const Bound& lo, const Bound& hi) {
  auto times = [&](const Bound& x) {
    if (x.poly) return Bound::of(c * *x.poly);
    const std::string k = c.str();
    return with_large(Bound::opaque((c.as_constant() || c.terms.size() == 1 ? k : "(" + k + ")") + " * (" + x.text + ")"),
                      x.large ? std::optional<Poly>(c * *x.large) : std::nullopt);
  };
  if (auto k = c.as_constant()) {
    if (*k >= 0) return {times(lo), times(hi)};
    return {times(hi), times(lo)};
  }
  const Bound a = times(lo), b = times(hi);
  return {min(a, b), max(a, b)};
}

}  // namespace dsmpass
