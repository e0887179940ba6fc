// SymExpr: canonical integer polynomials over atoms (named dims, floor divisions by constants,
// mins and maxes), interned in one process-wide table.
//
// Note [Canonical size expressions]: an expression is stored as a polynomial: a constant and a
// list of terms, each a coefficient (never 0) and a sorted list of atom ids (repeated for a
// power), the terms sorted by their atom lists. Atoms are interned by their content (a name; an
// expression id and a divisor; two expression ids in order), polynomials by their content, so
// building the same expression twice gives the same id, and `==` compares ids. Every operation
// produces a canonical polynomial (like terms combined, zero terms dropped, floor divisions
// split and folded), so equal inputs give equal outputs. Sorting by ids is canonical within a
// process; printing sorts by content instead, so the text does not depend on the order in
// which expressions were first built.
#include "symtrace/core/sym_expr.hpp"

#include "symtrace/core/detail/identifier.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

namespace symtrace {

namespace {

enum class AtomKind : std::uint8_t { symbol, floordiv, min, max };

struct Atom {
  AtomKind kind = AtomKind::symbol;
  std::string name;       // symbol
  std::uint32_t a = 0;    // floordiv: the dividend; min, max: the smaller id
  std::uint32_t b = 0;    // min, max: the larger id
  std::int64_t k = 0;     // floordiv: the divisor (> 1)
};

struct Term {
  std::vector<std::uint32_t> atoms;  // sorted, repeated for a power
  std::int64_t coeff = 0;            // never 0
};

struct Poly {
  std::int64_t constant = 0;
  std::vector<Term> terms;  // sorted by atoms, each atom list once
};

[[noreturn]] void overflow() {
  throw std::invalid_argument("a size expression overflows 64 bits; give smaller sizes");
}

std::int64_t add_checked(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) overflow();
  return r;
}

std::int64_t mul_checked(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) overflow();
  return r;
}

// Python's floor division and modulo, for k > 0.
std::int64_t floor_div(std::int64_t a, std::int64_t k) {
  std::int64_t q = a / k;
  if (a % k != 0 && a < 0) --q;
  return q;
}

class Table {
 public:
  Table() {
    polys_.emplace_back();  // id 0: the constant 0
    poly_ids_.emplace(key(polys_.front()), 0);
  }

  std::mutex& mutex() { return mutex_; }

  std::uint32_t intern(Poly p) {
    std::string k = key(p);
    if (auto it = poly_ids_.find(k); it != poly_ids_.end()) return it->second;
    if (polys_.size() >= std::numeric_limits<std::uint32_t>::max()) throw std::length_error("too many size expressions");
    const auto id = static_cast<std::uint32_t>(polys_.size());
    polys_.push_back(std::move(p));
    poly_ids_.emplace(std::move(k), id);
    return id;
  }

  std::uint32_t intern_atom(Atom a) {
    std::string k = atom_key(a);
    if (auto it = atom_ids_.find(k); it != atom_ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(atoms_.size());
    atoms_.push_back(std::move(a));
    atom_ids_.emplace(std::move(k), id);
    return id;
  }

  const Poly& poly(std::uint32_t id) const { return polys_[id]; }
  const Atom& atom(std::uint32_t id) const { return atoms_[id]; }
  std::size_t size() const { return polys_.size(); }

 private:
  static std::string key(const Poly& p) {
    std::string k = std::to_string(p.constant);
    for (const Term& t : p.terms) {
      k += ';';
      k += std::to_string(t.coeff);
      for (std::uint32_t a : t.atoms) {
        k += ',';
        k += std::to_string(a);
      }
    }
    return k;
  }
  static std::string atom_key(const Atom& a) {
    switch (a.kind) {
      case AtomKind::symbol: return "s" + a.name;
      case AtomKind::floordiv: return fmt::format("f{}/{}", a.a, a.k);
      case AtomKind::min: return fmt::format("m{},{}", a.a, a.b);
      case AtomKind::max: return fmt::format("M{},{}", a.a, a.b);
    }
    return {};
  }

  std::mutex mutex_;
  std::deque<Poly> polys_;  // deque: references stay valid while it grows
  std::unordered_map<std::string, std::uint32_t> poly_ids_;
  std::deque<Atom> atoms_;
  std::unordered_map<std::string, std::uint32_t> atom_ids_;
};

Table& table() {
  static Table t;  // NOLINT: the process-wide interning table
  return t;
}

// ---- polynomial arithmetic (the table's lock held) -----------------------------------------

Poly constant_poly(std::int64_t c) {
  Poly p;
  p.constant = c;
  return p;
}

Poly atom_poly(std::uint32_t atom) {
  Poly p;
  p.terms.push_back(Term{{atom}, 1});
  return p;
}

// Adds `coeff * atoms` to `terms` (kept sorted, without zero coefficients).
void add_term(std::vector<Term>& terms, std::vector<std::uint32_t> atoms, std::int64_t coeff) {
  auto it = std::lower_bound(terms.begin(), terms.end(), atoms, [](const Term& t, const std::vector<std::uint32_t>& a) {
    return t.atoms < a;
  });
  if (it != terms.end() && it->atoms == atoms) {
    it->coeff = add_checked(it->coeff, coeff);
    if (it->coeff == 0) terms.erase(it);
  } else if (coeff != 0) {
    terms.insert(it, Term{std::move(atoms), coeff});
  }
}

Poly add(const Poly& a, const Poly& b, std::int64_t b_scale = 1) {
  Poly r = a;
  r.constant = add_checked(r.constant, mul_checked(b.constant, b_scale));
  for (const Term& t : b.terms) add_term(r.terms, t.atoms, mul_checked(t.coeff, b_scale));
  return r;
}

Poly multiply(const Poly& a, const Poly& b) {
  Poly r;
  r.constant = mul_checked(a.constant, b.constant);
  for (const Term& t : a.terms) add_term(r.terms, t.atoms, mul_checked(t.coeff, b.constant));
  for (const Term& t : b.terms) add_term(r.terms, t.atoms, mul_checked(t.coeff, a.constant));
  for (const Term& x : a.terms) {
    for (const Term& y : b.terms) {
      std::vector<std::uint32_t> atoms;
      atoms.reserve(x.atoms.size() + y.atoms.size());
      std::merge(x.atoms.begin(), x.atoms.end(), y.atoms.begin(), y.atoms.end(), std::back_inserter(atoms));
      add_term(r.terms, std::move(atoms), mul_checked(x.coeff, y.coeff));
    }
  }
  return r;
}

Poly floordiv_poly(const Poly& e, std::int64_t k) {
  if (k == 1) return e;
  // e = k*Q + R, each coefficient and the constant split with a remainder in [0, k): then
  // e//k = Q + R//k, and R//k is 0 when R is a constant.
  Poly q = constant_poly(floor_div(e.constant, k));
  Poly rest = constant_poly(e.constant - k * q.constant);
  for (const Term& t : e.terms) {
    const std::int64_t c = floor_div(t.coeff, k);
    add_term(q.terms, t.atoms, c);
    add_term(rest.terms, t.atoms, t.coeff - k * c);
  }
  if (rest.terms.empty()) return q;
  // R = g*X + r with g dividing k and 0 <= r < g: R//k = X//(k/g).
  std::int64_t g = k;
  for (const Term& t : rest.terms) g = std::gcd(g, t.coeff);
  if (g > 1 && rest.constant < g) {
    Poly x;
    for (const Term& t : rest.terms) x.terms.push_back(Term{t.atoms, t.coeff / g});
    return add(q, floordiv_poly(x, k / g));
  }
  // (E//j)//k is E//(j*k).
  if (rest.constant == 0 && rest.terms.size() == 1 && rest.terms[0].coeff == 1 && rest.terms[0].atoms.size() == 1) {
    const Atom& inner = table().atom(rest.terms[0].atoms[0]);
    if (inner.kind == AtomKind::floordiv) {
      const Poly dividend = table().poly(inner.a);
      return add(q, floordiv_poly(dividend, mul_checked(inner.k, k)));
    }
  }
  Atom a;
  a.kind = AtomKind::floordiv;
  a.a = table().intern(std::move(rest));
  a.k = k;
  return add(q, atom_poly(table().intern_atom(std::move(a))));
}

std::uint32_t extremum(std::uint32_t a, std::uint32_t b, bool is_max) {
  if (a == b) return a;
  const Poly d = add(table().poly(a), table().poly(b), -1);
  if (d.terms.empty()) return (d.constant <= 0) != is_max ? a : b;  // a - b known: pick
  Atom atom;
  atom.kind = is_max ? AtomKind::max : AtomKind::min;
  atom.a = std::min(a, b);
  atom.b = std::max(a, b);
  return table().intern(atom_poly(table().intern_atom(std::move(atom))));
}

// ---- evaluation and printing (the table's lock held) ----------------------------------------

std::int64_t evaluate_poly(const Poly& p, const SymBindings& bindings);

std::int64_t evaluate_atom(const Atom& a, const SymBindings& bindings) {
  switch (a.kind) {
    case AtomKind::symbol: {
      for (const auto& [name, value] : bindings)
        if (name == a.name) return value;
      throw std::invalid_argument(fmt::format("the size expression needs a value for '{}'", a.name));
    }
    case AtomKind::floordiv: return floor_div(evaluate_poly(table().poly(a.a), bindings), a.k);
    case AtomKind::min:
      return std::min(evaluate_poly(table().poly(a.a), bindings), evaluate_poly(table().poly(a.b), bindings));
    case AtomKind::max:
      return std::max(evaluate_poly(table().poly(a.a), bindings), evaluate_poly(table().poly(a.b), bindings));
  }
  return 0;
}

std::int64_t evaluate_poly(const Poly& p, const SymBindings& bindings) {
  std::int64_t sum = p.constant;
  for (const Term& t : p.terms) {
    std::int64_t product = t.coeff;
    for (std::uint32_t a : t.atoms) product = mul_checked(product, evaluate_atom(table().atom(a), bindings));
    sum = add_checked(sum, product);
  }
  return sum;
}

void collect_symbols(const Poly& p, std::vector<std::string>& out) {
  for (const Term& t : p.terms) {
    for (std::uint32_t id : t.atoms) {
      const Atom& a = table().atom(id);
      if (a.kind == AtomKind::symbol) {
        out.push_back(a.name);
      } else {
        collect_symbols(table().poly(a.a), out);
        if (a.kind != AtomKind::floordiv) collect_symbols(table().poly(a.b), out);
      }
    }
  }
}

std::string print_poly(const Poly& p);

std::string print_atom(const Atom& a) {
  switch (a.kind) {
    case AtomKind::symbol: return a.name;
    case AtomKind::floordiv: {
      const Poly& e = table().poly(a.a);
      const bool bare = e.constant == 0 && e.terms.size() == 1 && e.terms[0].coeff == 1 && e.terms[0].atoms.size() == 1 &&
                        table().atom(e.terms[0].atoms[0]).kind != AtomKind::floordiv;
      return bare ? fmt::format("{}//{}", print_poly(e), a.k) : fmt::format("({})//{}", print_poly(e), a.k);
    }
    case AtomKind::min:
    case AtomKind::max: {
      std::string x = print_poly(table().poly(a.a));
      std::string y = print_poly(table().poly(a.b));
      if (y < x) std::swap(x, y);  // by content, not by id
      return fmt::format("{}({}, {})", a.kind == AtomKind::min ? "min" : "max", x, y);
    }
  }
  return {};
}

// A term's factors by content, floor divisions parenthesised when they are not alone.
std::string print_factors(const Term& t) {
  std::vector<std::string> factors;
  for (std::uint32_t id : t.atoms) {
    const Atom& a = table().atom(id);
    std::string text = print_atom(a);
    const bool alone = t.atoms.size() == 1 && (t.coeff == 1 || t.coeff == -1);
    factors.push_back(a.kind == AtomKind::floordiv && !alone ? "(" + text + ")" : std::move(text));
  }
  std::sort(factors.begin(), factors.end());
  std::string out;
  for (const std::string& f : factors) out += (out.empty() ? "" : "*") + f;
  return out;
}

std::string print_poly(const Poly& p) {
  struct Printed {
    std::size_t degree;
    std::string factors;
    std::int64_t coeff;
    bool bare_floordiv;  // one floor division, coefficient 1 or -1: printed without parentheses
  };
  std::vector<Printed> terms;
  for (const Term& t : p.terms) {
    const bool bare = t.atoms.size() == 1 && (t.coeff == 1 || t.coeff == -1) &&
                      table().atom(t.atoms[0]).kind == AtomKind::floordiv;
    terms.push_back(Printed{t.atoms.size(), print_factors(t), t.coeff, bare});
  }
  // Higher degrees first, then positive terms (`W - H//4`), then by text.
  std::sort(terms.begin(), terms.end(), [](const Printed& x, const Printed& y) {
    if (x.degree != y.degree) return x.degree > y.degree;
    if ((x.coeff < 0) != (y.coeff < 0)) return x.coeff > 0;
    return x.factors < y.factors;
  });
  std::string out;
  for (const Printed& t : terms) {
    const bool negative = t.coeff < 0;
    const std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(t.coeff) : static_cast<std::uint64_t>(t.coeff);
    const std::string body = magnitude == 1 ? t.factors : fmt::format("{}*{}", magnitude, t.factors);
    // A leading minus binds tighter than //: -(H//4), not -H//4.
    if (out.empty()) out = negative ? (t.bare_floordiv ? "-(" + body + ")" : "-" + body) : body;
    else out += (negative ? " - " : " + ") + body;
  }
  if (out.empty()) return std::to_string(p.constant);
  if (p.constant > 0) out += fmt::format(" + {}", p.constant);
  if (p.constant < 0) out += fmt::format(" - {}", 0 - static_cast<std::uint64_t>(p.constant));
  return out;
}

}  // namespace

struct SymExprAccess {
  static SymExpr make(std::uint32_t id) noexcept { return SymExpr(id, 0); }
};

namespace {
// Interns `p` and returns its handle (the table's lock held).
SymExpr handle(Poly p) { return SymExprAccess::make(table().intern(std::move(p))); }
}  // namespace

SymExpr::SymExpr(std::int64_t value) {
  if (value == 0) return;
  const std::lock_guard lock(table().mutex());
  id_ = table().intern(constant_poly(value));
}

SymExpr SymExpr::symbol(std::string_view name) {
  if (!detail::is_identifier(name))
    throw std::invalid_argument(fmt::format("'{}' cannot name a dim: a dim's name is an identifier (letters, digits "
                                            "and _, not first a digit), such as N or H",
                                            name));
  const std::lock_guard lock(table().mutex());
  Atom a;
  a.kind = AtomKind::symbol;
  a.name = std::string(name);
  return handle(atom_poly(table().intern_atom(std::move(a))));
}

SymExpr SymExpr::from_id(std::uint32_t id) {
  const std::lock_guard lock(table().mutex());
  if (id >= table().size()) throw std::invalid_argument(fmt::format("no size expression has the id {}", id));
  return SymExprAccess::make(id);
}

std::optional<std::int64_t> SymExpr::constant_value() const {
  const std::lock_guard lock(table().mutex());
  const Poly& p = table().poly(id_);
  if (!p.terms.empty()) return std::nullopt;
  return p.constant;
}

std::int64_t SymExpr::evaluate(const SymBindings& bindings) const {
  const std::lock_guard lock(table().mutex());
  return evaluate_poly(table().poly(id_), bindings);
}

std::vector<std::string> SymExpr::symbols() const {
  std::vector<std::string> out;
  {
    const std::lock_guard lock(table().mutex());
    collect_symbols(table().poly(id_), out);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

SymExpr operator+(SymExpr a, SymExpr b) {
  const std::lock_guard lock(table().mutex());
  return handle(add(table().poly(a.id_), table().poly(b.id_)));
}

SymExpr operator-(SymExpr a, SymExpr b) {
  const std::lock_guard lock(table().mutex());
  return handle(add(table().poly(a.id_), table().poly(b.id_), -1));
}

SymExpr operator-(SymExpr a) { return SymExpr(0) - a; }

SymExpr operator*(SymExpr a, SymExpr b) {
  const std::lock_guard lock(table().mutex());
  return handle(multiply(table().poly(a.id_), table().poly(b.id_)));
}

SymExpr floordiv(SymExpr a, std::int64_t k) {
  if (k <= 0) throw std::invalid_argument(fmt::format("floor division of a size by {}: the divisor must be positive", k));
  const std::lock_guard lock(table().mutex());
  const Poly e = table().poly(a.id_);  // a copy: interning may grow the table
  return handle(floordiv_poly(e, k));
}

SymExpr mod(SymExpr a, std::int64_t k) {
  if (k <= 0) throw std::invalid_argument(fmt::format("modulo of a size by {}: the divisor must be positive", k));
  return a - SymExpr(k) * floordiv(a, k);
}

SymExpr min(SymExpr a, SymExpr b) {
  const std::lock_guard lock(table().mutex());
  return SymExprAccess::make(extremum(a.id_, b.id_, false));
}

SymExpr max(SymExpr a, SymExpr b) {
  const std::lock_guard lock(table().mutex());
  return SymExprAccess::make(extremum(a.id_, b.id_, true));
}

std::string to_string(SymExpr e) {
  const std::lock_guard lock(table().mutex());
  return print_poly(table().poly(e.id()));
}

}  // namespace symtrace

auto fmt::formatter<symtrace::SymExpr>::format(symtrace::SymExpr e, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(e), ctx);
}
