// Symbolic integer arithmetic for access descriptors.
//
// A Poly is an integer polynomial over loop-invariant "symbols" (source text such as `n` or
// `s.rows`); an Affine is a linear form over loop variables whose coefficients are Polys.
// A Bound is a value the generated code computes before the loop: a Poly when it is known
// exactly, otherwise C++ text (e.g. std::min of two candidates whose order is unknown).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dsmpass {

struct Poly {
  // Sorted product of symbols -> integer coefficient; the empty product is the constant.
  std::map<std::vector<std::string>, long> terms;

  static Poly constant(long c);
  static Poly symbol(const std::string& text);
  std::optional<long> as_constant() const;
  bool is_zero() const { return terms.empty(); }
  std::string str() const;
};

Poly operator+(const Poly& a, const Poly& b);
Poly operator-(const Poly& a);
Poly operator-(const Poly& a, const Poly& b);
Poly operator*(const Poly& a, const Poly& b);
bool operator==(const Poly& a, const Poly& b);

struct Affine {
  // Loop variable name -> coefficient; the key "" holds the loop-invariant part.
  std::map<std::string, Poly> parts;

  static Affine invariant(const Poly& p);
  static Affine variable(const std::string& name);
  Poly coef(const std::string& var) const;
  bool has_variables() const;
};

Affine operator+(const Affine& a, const Affine& b);
Affine operator-(const Affine& a);
// Empty when both sides contain loop variables (the product is not affine).
std::optional<Affine> operator*(const Affine& a, const Affine& b);

struct Bound {
  std::optional<Poly> poly;  // exact value, when known
  std::string text;          // C++ expression of type long, always valid
  // The value once every symbol is large (std::min(n, n*n - n) is n then), when known: what
  // the dependence warnings reason with, never what the generated code computes.
  std::optional<Poly> large{};

  static Bound of(const Poly& p);
  static Bound opaque(std::string text);
};

Bound operator+(const Bound& a, const Bound& b);
// Smaller/larger of two bounds: decided at compile time when their difference is a
// constant, otherwise left to std::min/std::max in the generated code.
Bound min(const Bound& a, const Bound& b);
Bound max(const Bound& a, const Bound& b);
// c * [lo, hi] as an interval, for a coefficient c of unknown sign.
std::pair<Bound, Bound> scale(const Poly& c, const Bound& lo, const Bound& hi);

// The sign of p for every large enough value of its one symbol (its leading term's); none
// when p has several symbols.
std::optional<int> sign_when_large(const Poly& p);

// Sign of a - b when it is a compile-time constant.
std::optional<long> difference(const Bound& a, const Bound& b);

}  // namespace dsmpass
