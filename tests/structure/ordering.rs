//! Where the judge and its consumers order figures: each float comparison (`total_cmp`,
//! `partial_cmp`) in non-test code, by file. A ranking of targets takes the one rule's type
//! (`Ranked::best_first`, `Ranked::ratio`), which does its comparing inside `metric/rank.rs`;
//! what is left elsewhere orders other things (a chart's points, the reasons behind a lead).

use std::collections::BTreeMap;

use syn::visit::Visit;

/// Float comparisons in `source`, test code left out.
pub fn float_orderings(source: &str) -> usize {
    struct Count(usize);
    impl<'ast> Visit<'ast> for Count {
        fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
            let test = m.attrs.iter().any(|a| {
                a.path().is_ident("cfg") && a.meta.require_list().is_ok_and(|l| l.tokens.to_string() == "test")
            });
            if !test {
                syn::visit::visit_item_mod(self, m);
            }
        }
        fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
            if c.method == "total_cmp" || c.method == "partial_cmp" {
                self.0 += 1;
            }
            syn::visit::visit_expr_method_call(self, c);
        }
        fn visit_path(&mut self, p: &'ast syn::Path) {
            if p.segments
                .last()
                .is_some_and(|s| s.ident == "total_cmp" || s.ident == "partial_cmp")
            {
                self.0 += 1;
            }
            syn::visit::visit_path(self, p);
        }
    }
    let file = syn::parse_file(source).expect("parses");
    let mut c = Count(0);
    c.visit_file(&file);
    c.0
}

/// The files of the judge and its consumers (`bench/judge/`, `report/`, `advise/`), their
/// tests and the rule itself left out, with their float comparisons.
pub fn in_consumers(files: &BTreeMap<String, String>) -> BTreeMap<String, usize> {
    files
        .iter()
        .filter(|(f, _)| ["bench/judge/", "report/", "advise/"].iter().any(|d| f.starts_with(d)))
        .filter(|(f, _)| !f.ends_with("tests.rs") && f.as_str() != "bench/judge/metric/rank.rs")
        .map(|(f, s)| (f.clone(), float_orderings(s)))
        .filter(|(_, n)| *n > 0)
        .collect()
}
