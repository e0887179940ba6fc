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
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace symtrace {

namespace {

enum class AtomKind : std::uint8_t {
  symbol,
  floordiv,
  min,
  max
};

// Interval arithmetic on 128 bits, with `inf` standing for no bound (see "bounds" below).
__extension__ using Wide = __int128;
constexpr Wide inf = Wide{1} << 100;

struct Atom {
  // The bounds of the atom's values, computed once (under the table's lock): nested mins and
  // maxes would otherwise make bounds exponential in the depth of nesting.
  mutable bool has_bounds = false;
  mutable Wide lo = 0, hi = 0;
  AtomKind kind = AtomKind::symbol;
  std::string name;     // symbol
  SymRange range;       // symbol
  std::uint32_t a = 0;  // floordiv: the dividend; min, max: the smaller id
  std::uint32_t b = 0;  // min, max: the larger id
  std::int64_t k = 0;   // floordiv: the divisor (> 1)
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

  // Note [Memoised size arithmetic]: a trace computes the same few expressions over and over
  // (every convolution of a stage gives `H//4`), so each operation on ids is remembered.
  struct OpKey {
    std::uint32_t op;
    std::uint32_t a;
    std::int64_t b;
    friend bool operator==(const OpKey&, const OpKey&) = default;
  };
  struct OpKeyHash {
    std::size_t operator()(const OpKey& k) const noexcept {
      return std::hash<std::uint64_t>{}((std::uint64_t{k.op} << 32 | k.a) * 0x9E3779B97F4A7C15ULL ^
                                        static_cast<std::uint64_t>(k.b));
    }
  };
  std::optional<std::uint32_t> remembered(const OpKey& k) const {
    if (auto it = ops_.find(k); it != ops_.end()) return it->second;
    return std::nullopt;
  }
  void remember(const OpKey& k, std::uint32_t id) { ops_.emplace(k, id); }

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
      case AtomKind::symbol: return fmt::format("s{}:{}:{}", a.name, a.range.lo, a.range.hi);
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
  std::unordered_map<OpKey, std::uint32_t, OpKeyHash> ops_;
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

constexpr std::size_t max_terms = 4096;

// Adds `coeff * atoms` to `terms` (kept sorted, without zero coefficients).
void add_term(std::vector<Term>& terms, std::vector<std::uint32_t> atoms, std::int64_t coeff) {
  auto it = std::lower_bound(terms.begin(), terms.end(), atoms, [](const Term& t, const std::vector<std::uint32_t>& a) {
    return t.atoms < a;
  });
  if (it != terms.end() && it->atoms == atoms) {
    it->coeff = add_checked(it->coeff, coeff);
    if (it->coeff == 0) terms.erase(it);
  } else if (coeff != 0) {
    // A size is a short formula; a huge one is hostile input (a document's shape string) or a
    // runaway, and would make every operation on it slow.
    if (terms.size() >= max_terms)
      throw std::invalid_argument(fmt::format("a size expression would have more than {} terms; give smaller formulas",
                                              max_terms));
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
  // (E//j + c)//k is (E + c*j)//(j*k): floor(floor(x)/k) = floor(x/k) for x = (E + c*j)/j.
  if (rest.terms.size() == 1 && rest.terms[0].coeff == 1 && rest.terms[0].atoms.size() == 1) {
    const Atom& inner = table().atom(rest.terms[0].atoms[0]);
    if (inner.kind == AtomKind::floordiv) {
      const std::int64_t j = inner.k;
      const Poly dividend = add(table().poly(inner.a), constant_poly(mul_checked(rest.constant, j)));
      return add(q, floordiv_poly(dividend, mul_checked(j, k)));
    }
  }
  Atom a;
  a.kind = AtomKind::floordiv;
  a.a = table().intern(std::move(rest));
  a.k = k;
  return add(q, atom_poly(table().intern_atom(std::move(a))));
}

// True when the ranges prove d <= 0, false when they prove d >= 0 (d is not 0), nullopt when
// they decide neither.
std::optional<bool> known_nonpositive(const Poly& d);

std::uint32_t extremum(std::uint32_t a, std::uint32_t b, bool is_max) {
  if (a == b) return a;
  const Poly d = add(table().poly(a), table().poly(b), -1);
  if (d.terms.empty()) return (d.constant <= 0) != is_max ? a : b;                                // a - b known: pick
  if (const std::optional<bool> a_le_b = known_nonpositive(d)) return *a_le_b != is_max ? a : b;  // the ranges decide
  Atom atom;
  atom.kind = is_max ? AtomKind::max : AtomKind::min;
  atom.a = std::min(a, b);
  atom.b = std::max(a, b);
  return table().intern(atom_poly(table().intern_atom(std::move(atom))));
}

// ---- evaluation and printing (the table's lock held) ----------------------------------------

// Expressions share subexpressions (a DAG): walks remember each atom they have seen, so they
// are linear in the DAG's size, not in the size of the tree it unfolds to.
using AtomValues = std::unordered_map<std::uint32_t, std::int64_t>;

std::int64_t evaluate_poly(const Poly& p, const SymBindings& bindings, AtomValues& seen);

std::int64_t evaluate_atom(std::uint32_t id, const SymBindings& bindings, AtomValues& seen) {
  if (auto it = seen.find(id); it != seen.end()) return it->second;
  const Atom& a = table().atom(id);
  std::int64_t v = 0;
  switch (a.kind) {
    case AtomKind::symbol: {
      const auto it = std::find_if(bindings.begin(), bindings.end(), [&](const auto& b) { return b.first == a.name; });
      if (it == bindings.end()) throw std::invalid_argument(fmt::format("the size expression needs a value for '{}'", a.name));
      v = it->second;
      break;
    }
    case AtomKind::floordiv: v = floor_div(evaluate_poly(table().poly(a.a), bindings, seen), a.k); break;
    case AtomKind::min:
      v = std::min(evaluate_poly(table().poly(a.a), bindings, seen), evaluate_poly(table().poly(a.b), bindings, seen));
      break;
    case AtomKind::max:
      v = std::max(evaluate_poly(table().poly(a.a), bindings, seen), evaluate_poly(table().poly(a.b), bindings, seen));
      break;
  }
  seen.emplace(id, v);
  return v;
}

std::int64_t evaluate_poly(const Poly& p, const SymBindings& bindings, AtomValues& seen) {
  std::int64_t sum = p.constant;
  for (const Term& t : p.terms) {
    std::int64_t product = t.coeff;
    for (std::uint32_t a : t.atoms) product = mul_checked(product, evaluate_atom(a, bindings, seen));
    sum = add_checked(sum, product);
  }
  return sum;
}

// The symbol atoms of `p`, each once (`visited` holds the atoms walked).
void collect_symbol_ids(const Poly& p, std::unordered_set<std::uint32_t>& visited, std::vector<std::uint32_t>& out) {
  for (const Term& t : p.terms) {
    for (std::uint32_t id : t.atoms) {
      if (!visited.insert(id).second) continue;
      const Atom& a = table().atom(id);
      if (a.kind == AtomKind::symbol) {
        out.push_back(id);
      } else {
        collect_symbol_ids(table().poly(a.a), visited, out);
        if (a.kind != AtomKind::floordiv) collect_symbol_ids(table().poly(a.b), visited, out);
      }
    }
  }
}

void collect_symbols(const Poly& p, std::vector<std::string>& out) {
  std::unordered_set<std::uint32_t> visited;
  std::vector<std::uint32_t> ids;
  collect_symbol_ids(p, visited, ids);
  for (std::uint32_t id : ids) out.push_back(table().atom(id).name);
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

std::string print_terms(const Poly& p);

// `X % k` is stored as `X - k*(X//k)`; printed as it was written.
// `pure`, when given, is set when the remainder is the whole expression.
std::optional<std::string> print_mod(const Poly& p, bool* pure = nullptr) {
  for (const Term& t : p.terms) {
    if (t.coeff >= -1 || t.atoms.size() != 1) continue;
    const Atom& a = table().atom(t.atoms[0]);
    const std::int64_t k = -t.coeff;
    if (a.kind != AtomKind::floordiv || a.k % k != 0) continue;
    // X - k*(X//k) where X//k is stored as E//m: X is E when m == k, else E//(m/k), whose
    // floor division by k nests into E//m.
    const Poly x = a.k == k ? table().poly(a.a) : floordiv_poly(table().poly(a.a), a.k / k);
    // Only when X//k is that very atom, so that the text reads back as the same expression.
    const Poly xk = floordiv_poly(x, k);
    if (xk.constant != 0 || xk.terms.size() != 1 || xk.terms[0].coeff != 1 || xk.terms[0].atoms != t.atoms) continue;
    Poly r = add(add(p, atom_poly(t.atoms[0]), k), x, -1);
    if (r.terms.size() + x.terms.size() + 1 != p.terms.size()) continue;  // X is not all there
    const bool bare = x.constant == 0 && x.terms.size() == 1 && x.terms[0].coeff == 1 && x.terms[0].atoms.size() == 1 &&
                      table().atom(x.terms[0].atoms[0]).kind == AtomKind::symbol;
    std::string text = bare ? fmt::format("{} % {}", print_terms(x), k) : fmt::format("({}) % {}", print_terms(x), k);
    const bool alone = r.terms.empty() && r.constant == 0;
    if (pure != nullptr) *pure = alone;
    if (alone) return text;
    return print_terms(r) + " + " + text;
  }
  return std::nullopt;
}

std::string print_poly(const Poly& p) {
  if (auto m = print_mod(p)) return *m;
  return print_terms(p);
}

std::string print_terms(const Poly& p) {
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

// ---- bounds (the table's lock held) -----------------------------------------------------------

Wide clamp_wide(Wide v) { return v > inf ? inf : v < -inf ? -inf
                                                          : v; }
Wide mul_wide(Wide a, Wide b) {
  if (a == 0 || b == 0) return 0;
  if (a >= inf || a <= -inf || b >= inf || b <= -inf) return (a > 0) == (b > 0) ? inf : -inf;
  // Both below 2^100 in magnitude: clamp before the product can overflow.
  const Wide limit = inf / (b < 0 ? -b : b);
  if ((a < 0 ? -a : a) > limit) return (a > 0) == (b > 0) ? inf : -inf;
  return clamp_wide(a * b);
}
// A bound of a sum: an infinite bound on either side makes it infinite; opposite infinities
// (which interval sums of like bounds do not make) give no bound.
Wide add_bound(Wide a, Wide b, bool upper) {
  if ((a >= inf && b <= -inf) || (a <= -inf && b >= inf)) return upper ? inf : -inf;
  if (a >= inf || b >= inf) return inf;
  if (a <= -inf || b <= -inf) return -inf;
  return clamp_wide(a + b);
}
Wide floordiv_wide(Wide a, std::int64_t k) {
  if (a >= inf || a <= -inf) return a;
  Wide q = a / k;
  if (a % k != 0 && a < 0) --q;
  return q;
}

struct Interval {
  Wide lo, hi;
};

Interval bounds_poly(const Poly& p);

Interval compute_bounds_atom(const Atom& a);

Interval bounds_atom(const Atom& a) {
  if (!a.has_bounds) {
    const Interval b = compute_bounds_atom(a);
    a.lo = b.lo;
    a.hi = b.hi;
    a.has_bounds = true;
  }
  return {a.lo, a.hi};
}

Interval compute_bounds_atom(const Atom& a) {
  switch (a.kind) {
    case AtomKind::symbol:
      return {a.range.lo == -SymRange::unbounded ? -inf : Wide{a.range.lo},
              a.range.hi == SymRange::unbounded ? inf : Wide{a.range.hi}};
    case AtomKind::floordiv: {
      const Interval x = bounds_poly(table().poly(a.a));
      return {floordiv_wide(x.lo, a.k), floordiv_wide(x.hi, a.k)};
    }
    case AtomKind::min:
    case AtomKind::max: {
      const Interval x = bounds_poly(table().poly(a.a));
      const Interval y = bounds_poly(table().poly(a.b));
      if (a.kind == AtomKind::min) return {std::min(x.lo, y.lo), std::min(x.hi, y.hi)};
      return {std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
    }
  }
  return {-inf, inf};
}

Interval times(Interval x, Interval y) {
  const Wide c[4] = {mul_wide(x.lo, y.lo), mul_wide(x.lo, y.hi), mul_wide(x.hi, y.lo), mul_wide(x.hi, y.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

Interval bounds_poly(const Poly& p) {
  Interval sum{p.constant, p.constant};
  for (const Term& t : p.terms) {
    Interval term{t.coeff, t.coeff};
    // A power of one atom is a product of equal values: x*x is never negative.
    for (std::size_t i = 0; i < t.atoms.size(); ++i) {
      const Interval a = bounds_atom(table().atom(t.atoms[i]));
      if (i + 1 < t.atoms.size() && t.atoms[i + 1] == t.atoms[i]) {
        Interval sq = times(a, a);
        if (a.lo <= 0 && a.hi >= 0) sq.lo = 0;
        else sq.lo = std::max<Wide>(sq.lo, std::min(mul_wide(a.lo, a.lo), mul_wide(a.hi, a.hi)));
        term = times(term, sq);
        ++i;
      } else {
        term = times(term, a);
      }
    }
    sum = {add_bound(sum.lo, term.lo, false), add_bound(sum.hi, term.hi, true)};
  }
  return sum;
}

std::optional<bool> known_nonpositive(const Poly& d) {
  const Interval b = bounds_poly(d);
  if (b.hi <= 0) return true;
  if (b.lo >= 0) return false;
  return std::nullopt;
}

// `a / b` for b a nonzero constant or one term, when it divides every term of `a`.
std::optional<Poly> quotient(const Poly& a, const Poly& b) {
  if (b.terms.empty()) {
    if (b.constant == 0) return std::nullopt;
    Poly q = constant_poly(0);
    if (a.constant % b.constant != 0) return std::nullopt;
    q.constant = a.constant / b.constant;
    for (const Term& t : a.terms) {
      if (t.coeff % b.constant != 0) return std::nullopt;
      q.terms.push_back(Term{t.atoms, t.coeff / b.constant});
    }
    return q;
  }
  if (b.constant != 0 || b.terms.size() != 1 || a.constant != 0) return std::nullopt;
  const Term& m = b.terms[0];
  Poly q;
  for (const Term& t : a.terms) {
    if (t.coeff % m.coeff != 0) return std::nullopt;
    std::vector<std::uint32_t> rest;
    if (!std::includes(t.atoms.begin(), t.atoms.end(), m.atoms.begin(), m.atoms.end())) return std::nullopt;
    std::set_difference(t.atoms.begin(), t.atoms.end(), m.atoms.begin(), m.atoms.end(), std::back_inserter(rest));
    if (rest.empty()) q.constant = add_checked(q.constant, t.coeff / m.coeff);
    else add_term(q.terms, std::move(rest), t.coeff / m.coeff);
  }
  return q;
}

void collect_symbol_atoms(const Poly& p, std::vector<const Atom*>& out) {
  std::unordered_set<std::uint32_t> visited;
  std::vector<std::uint32_t> ids;
  collect_symbol_ids(p, visited, ids);
  for (std::uint32_t id : ids) out.push_back(&table().atom(id));
}

}  // namespace

struct SymExprAccess {
  static SymExpr make(std::uint32_t id) noexcept { return SymExpr(id, 0); }
};

namespace {
// Interns `p` and returns its handle (the table's lock held).
SymExpr handle(Poly p) { return SymExprAccess::make(table().intern(std::move(p))); }
}  // namespace

namespace {
enum class OpCode : std::uint32_t {
  add,
  sub,
  mul,
  floordiv,
  min,
  max,
  constant
};

// Computes `f()` once per (op, a, b); the table's lock held.
// Note [Memoised size arithmetic] continued: each thread also remembers what it computed, in a
// map of its own, so a trace's repeated operations take no lock at all. Ids never change
// meaning, so a thread's memory stays true.
struct ThreadMemo {
  std::unordered_map<Table::OpKey, std::uint32_t, Table::OpKeyHash> ops;
  std::unordered_map<std::uint32_t, std::optional<std::int64_t>> constants;
  std::unordered_map<std::uint32_t, SymRange> bounds;
};
ThreadMemo& thread_memo() {
  thread_local ThreadMemo memo;
  return memo;
}

// Computes `f()` (under the table's lock) once per (op, a, b).
template <class F>
SymExpr memoised(OpCode op, std::uint32_t a, std::int64_t b, F&& f) {
  const Table::OpKey key{static_cast<std::uint32_t>(op), a, b};
  ThreadMemo& memo = thread_memo();
  if (auto it = memo.ops.find(key); it != memo.ops.end()) return SymExprAccess::make(it->second);
  std::uint32_t id = 0;
  {
    const std::lock_guard lock(table().mutex());
    if (auto known = table().remembered(key)) {
      id = *known;
    } else {
      id = f().id();
      table().remember(key, id);
    }
  }
  memo.ops.emplace(key, id);
  return SymExprAccess::make(id);
}
}  // namespace

SymExpr::SymExpr(std::int64_t value) {
  if (value == 0) return;
  id_ = memoised(OpCode::constant, 0, value, [&] { return handle(constant_poly(value)); }).id();
}

SymExpr SymExpr::symbol(std::string_view name, SymRange range) {
  if (!detail::is_identifier(name) || name == "min" || name == "max")
    throw std::invalid_argument(fmt::format("'{}' cannot name a dim: a dim's name is an identifier (letters, digits "
                                            "and _, not first a digit, not min or max), such as N or H",
                                            name));
  if (range.lo > range.hi)
    throw std::invalid_argument(fmt::format("dim '{}' has the empty range {}..{}: give lo <= hi", name, range.lo, range.hi));
  const std::lock_guard lock(table().mutex());
  Atom a;
  a.kind = AtomKind::symbol;
  a.name = std::string(name);
  a.range = range;
  return handle(atom_poly(table().intern_atom(std::move(a))));
}

SymExpr SymExpr::from_id(std::uint32_t id) {
  const std::lock_guard lock(table().mutex());
  if (id >= table().size()) throw std::invalid_argument(fmt::format("no size expression has the id {}", id));
  return SymExprAccess::make(id);
}

std::optional<std::int64_t> SymExpr::constant_value() const {
  if (id_ == 0) return 0;
  auto& constants = thread_memo().constants;
  if (auto it = constants.find(id_); it != constants.end()) return it->second;
  std::optional<std::int64_t> c;
  {
    const std::lock_guard lock(table().mutex());
    const Poly& p = table().poly(id_);
    if (p.terms.empty()) c = p.constant;
  }
  constants.emplace(id_, c);
  return c;
}

std::vector<std::pair<std::string, SymRange>> SymExpr::symbol_ranges() const {
  std::vector<std::pair<std::string, SymRange>> out;
  {
    const std::lock_guard lock(table().mutex());
    std::vector<const Atom*> atoms;
    collect_symbol_atoms(table().poly(id_), atoms);
    for (const Atom* a : atoms) out.emplace_back(a->name, a->range);
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return std::tie(x.first, x.second.lo, x.second.hi) < std::tie(y.first, y.second.lo, y.second.hi);
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<std::pair<std::string, SymRange>> SymExpr::as_symbol() const {
  const std::lock_guard lock(table().mutex());
  const Poly& p = table().poly(id_);
  if (p.constant != 0 || p.terms.size() != 1 || p.terms[0].coeff != 1 || p.terms[0].atoms.size() != 1) return std::nullopt;
  const Atom& a = table().atom(p.terms[0].atoms[0]);
  if (a.kind != AtomKind::symbol) return std::nullopt;
  return std::pair{a.name, a.range};
}

SymRange SymExpr::bounds() const {
  auto& bounds = thread_memo().bounds;
  if (auto it = bounds.find(id_); it != bounds.end()) return it->second;
  Interval b;
  {
    const std::lock_guard lock(table().mutex());
    b = bounds_poly(table().poly(id_));
  }
  constexpr std::int64_t top = SymRange::unbounded;
  const SymRange r{b.lo <= -Wide{top} ? -top : static_cast<std::int64_t>(b.lo),
                   b.hi >= Wide{top} ? top : static_cast<std::int64_t>(b.hi)};
  bounds.emplace(id_, r);
  return r;
}

std::int64_t SymExpr::evaluate(const SymBindings& bindings) const {
  const std::lock_guard lock(table().mutex());
  AtomValues seen;
  return evaluate_poly(table().poly(id_), bindings, seen);
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
  if (b.id_ == 0) return a;
  if (a.id_ == 0) return b;
  if (a.id_ > b.id_) std::swap(a, b);
  return memoised(OpCode::add, a.id_, b.id_, [&] { return handle(add(table().poly(a.id_), table().poly(b.id_))); });
}

SymExpr operator-(SymExpr a, SymExpr b) {
  if (b.id_ == 0) return a;
  return memoised(OpCode::sub, a.id_, b.id_, [&] { return handle(add(table().poly(a.id_), table().poly(b.id_), -1)); });
}

SymExpr operator-(SymExpr a) { return SymExpr(0) - a; }

SymExpr operator*(SymExpr a, SymExpr b) {
  if (a.id_ > b.id_) std::swap(a, b);
  return memoised(OpCode::mul, a.id_, b.id_, [&] { return handle(multiply(table().poly(a.id_), table().poly(b.id_))); });
}

SymExpr floordiv(SymExpr a, std::int64_t k) {
  if (k <= 0) throw std::invalid_argument(fmt::format("floor division of a size by {}: the divisor must be positive", k));
  return memoised(OpCode::floordiv, a.id_, k, [&] {
    const Poly e = table().poly(a.id_);  // a copy: interning may grow the table
    return handle(floordiv_poly(e, k));
  });
}

std::optional<SymExpr> divide_exactly(SymExpr a, SymExpr b) {
  const std::lock_guard lock(table().mutex());
  std::optional<Poly> q = quotient(table().poly(a.id_), table().poly(b.id_));
  if (!q) return std::nullopt;
  return handle(std::move(*q));
}

SymExpr mod(SymExpr a, std::int64_t k) {
  if (k <= 0) throw std::invalid_argument(fmt::format("modulo of a size by {}: the divisor must be positive", k));
  return a - SymExpr(k) * floordiv(a, k);
}

SymExpr min(SymExpr a, SymExpr b) {
  if (a.id_ > b.id_) std::swap(a, b);
  return memoised(OpCode::min, a.id_, b.id_, [&] { return SymExprAccess::make(extremum(a.id_, b.id_, false)); });
}

SymExpr max(SymExpr a, SymExpr b) {
  if (a.id_ > b.id_) std::swap(a, b);
  return memoised(OpCode::max, a.id_, b.id_, [&] { return SymExprAccess::make(extremum(a.id_, b.id_, true)); });
}

// ---- parsing ----------------------------------------------------------------------------------

namespace {

// Recursive descent over Python's precedence: sums of products of unary terms.
class Parser {
 public:
  Parser(std::string_view text, const std::function<SymRange(std::string_view)>& range_of)
      : text_(text), range_of_(range_of) {}

  SymExpr parse() {
    SymExpr e = sum();
    skip_space();
    if (pos_ != text_.size()) fail("an operator or the end");
    return e;
  }

 private:
  [[noreturn]] void fail(std::string_view wanted) const {
    const std::string_view found = pos_ < text_.size() ? text_.substr(pos_, 1) : std::string_view("the end");
    throw std::invalid_argument(fmt::format("bad size expression '{}': at position {}, expected {}, found '{}'", text_,
                                            pos_ + 1, wanted, found));
  }
  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool eat(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  void expect(std::string_view token) {
    if (!eat(token)) fail(fmt::format("'{}'", token));
  }

  SymExpr sum() {
    SymExpr e = product();
    while (true) {
      if (eat("+")) e = e + product();
      else if (eat("-")) e = e - product();
      else return e;
    }
  }
  SymExpr product() {
    SymExpr e = unary();
    while (true) {
      if (eat("*")) {
        e = e * unary();
      } else if (eat("//") || eat("%")) {
        const bool is_mod = text_[pos_ - 1] == '%';
        const std::size_t at = pos_;
        const std::optional<std::int64_t> k = unary().constant_value();
        if (!k || *k <= 0) {
          pos_ = at;
          skip_space();
          fail("a positive integer divisor");
        }
        e = is_mod ? mod(e, *k) : floordiv(e, *k);
      } else {
        return e;
      }
    }
  }
  SymExpr unary() {
    if (eat("-")) {
      const Deeper guard(*this);
      return -unary();
    }
    return primary();
  }
  // Nesting is bounded: a text is read by recursion, and a hostile one must not exhaust the stack.
  struct Deeper {
    explicit Deeper(Parser& p) : parser(p) {
      if (++parser.depth_ > max_depth) parser.fail("at most 200 levels of nesting");
    }
    ~Deeper() { --parser.depth_; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;
    Parser& parser;
  };
  static constexpr int max_depth = 200;
  SymExpr primary() {
    skip_space();
    if (eat("(")) {
      const Deeper guard(*this);
      SymExpr e = sum();
      expect(")");
      return e;
    }
    const std::size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      std::int64_t v = 0;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v)) {
          pos_ = start;
          fail("an integer of at most 64 bits");
        }
        ++pos_;
      }
      return SymExpr(v);
    }
    while (pos_ < text_.size() && detail::is_identifier(text_.substr(start, pos_ - start + 1))) ++pos_;
    const std::string_view name = text_.substr(start, pos_ - start);
    if (name.empty()) fail("a number, a dim's name, min, max or '('");
    if (name == "min" || name == "max") {
      const Deeper guard(*this);
      expect("(");
      SymExpr a = sum();
      expect(",");
      SymExpr b = sum();
      expect(")");
      return name == "min" ? min(a, b) : max(a, b);
    }
    return SymExpr::symbol(name, range_of_(name));
  }

  std::string_view text_;
  const std::function<SymRange(std::string_view)>& range_of_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

SymExpr SymExpr::parse(std::string_view text, const std::function<SymRange(std::string_view)>& range_of) {
  return Parser(text, range_of).parse();
}

// ---- facts ------------------------------------------------------------------------------------

std::string_view to_string(SymRel r) noexcept {
  switch (r) {
    case SymRel::eq: return "==";
    case SymRel::ne: return "!=";
    case SymRel::lt: return "<";
    case SymRel::le: return "<=";
    case SymRel::gt: return ">";
    case SymRel::ge: return ">=";
  }
  return "?";
}

std::optional<bool> SymFact::decide() const {
  const SymExpr d = lhs - rhs;
  const SymRange b = d.bounds();
  const bool pos = b.lo > 0, neg = b.hi < 0, zero = b.lo == 0 && b.hi == 0;
  const bool nonneg = b.lo >= 0, nonpos = b.hi <= 0;
  switch (rel) {
    case SymRel::eq: return zero ? std::optional(true) : (pos || neg) ? std::optional(false)
                                                                      : std::nullopt;
    case SymRel::ne: return zero ? std::optional(false) : (pos || neg) ? std::optional(true)
                                                                       : std::nullopt;
    case SymRel::lt: return neg ? std::optional(true) : nonneg ? std::optional(false)
                                                               : std::nullopt;
    case SymRel::le: return nonpos ? std::optional(true) : pos ? std::optional(false)
                                                               : std::nullopt;
    case SymRel::gt: return pos ? std::optional(true) : nonpos ? std::optional(false)
                                                               : std::nullopt;
    case SymRel::ge: return nonneg ? std::optional(true) : neg ? std::optional(false)
                                                               : std::nullopt;
  }
  return std::nullopt;
}

bool SymFact::holds(const SymBindings& bindings) const {
  const std::int64_t a = lhs.evaluate(bindings), b = rhs.evaluate(bindings);
  switch (rel) {
    case SymRel::eq: return a == b;
    case SymRel::ne: return a != b;
    case SymRel::lt: return a < b;
    case SymRel::le: return a <= b;
    case SymRel::gt: return a > b;
    case SymRel::ge: return a >= b;
  }
  return false;
}

SymFact SymFact::parse(std::string_view text, const std::function<SymRange(std::string_view)>& range_of) {
  const std::size_t at = text.find_first_of("=!<>");
  if (at == std::string_view::npos)
    throw std::invalid_argument(fmt::format("bad size fact '{}': expected two sizes compared by ==, !=, <, <=, > or >=", text));
  // clang-format off
  static constexpr std::pair<std::string_view, SymRel> rels[] = {{"==", SymRel::eq}, {"!=", SymRel::ne}, {"<=", SymRel::le},
                                                                 {">=", SymRel::ge}, {"<", SymRel::lt},  {">", SymRel::gt}};
  // clang-format on
  for (const auto& [token, rel] : rels) {
    if (text.substr(at, token.size()) != token) continue;
    return SymFact{SymExpr::parse(text.substr(0, at), range_of), rel,
                   SymExpr::parse(text.substr(at + token.size()), range_of)};
  }
  throw std::invalid_argument(fmt::format("bad size fact '{}': at position {}, expected ==, !=, <, <=, > or >=", text, at + 1));
}

SymFact SymFact::normalized() const {
  if (rel != SymRel::eq && rel != SymRel::ne) return *this;
  const SymExpr d = lhs - rhs;
  bool pure = false;
  {
    const std::lock_guard lock(table().mutex());
    (void)print_mod(table().poly(d.id()), &pure);
  }
  return pure ? SymFact{d, rel, SymExpr(0)} : *this;
}

std::string to_string(const SymFact& f) { return fmt::format("{} {} {}", f.lhs, to_string(f.rel), f.rhs); }

std::string to_string(const SymRange& r) {
  std::string out = r.lo == -SymRange::unbounded ? "" : std::to_string(r.lo);
  out += "..";
  if (r.hi != SymRange::unbounded) out += std::to_string(r.hi);
  return out;
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

auto fmt::formatter<symtrace::SymFact>::format(const symtrace::SymFact& f, format_context& ctx) const
    -> format_context::iterator {
  return formatter<std::string_view>::format(symtrace::to_string(f), ctx);
}
