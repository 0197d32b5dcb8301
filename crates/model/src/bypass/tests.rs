use super::*;

fn model(queues: usize, threshold: usize, lambda: f64, mu: f64) -> Bypass {
    Bypass {
        queues,
        threshold,
        lambda,
        mu,
    }
}

/// Within `rel` of each other, or both within the solver's absolute accuracy of each other (a
/// residual of 1e-12 leaves probabilities far below it with few exact digits).
fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()) + 1e-11
}

#[test]
fn every_row_of_the_generator_sums_to_zero_and_only_its_diagonal_is_negative() {
    for (n, t) in [(1, 1), (1, 7), (2, 1), (3, 2), (4, 3), (5, 2)] {
        let p = model(n, t, 1.7, 0.9);
        let q = generator(&p).unwrap();
        assert_eq!(q.rows(), (t + 1).pow(n as u32));
        for (s, row) in q.outer_iterator().enumerate() {
            let sum: f64 = row.iter().map(|(_, &v)| v).sum();
            assert!(sum.abs() < 1e-12, "row {s} of {n}x{t} sums to {sum}");
            for (to, &v) in row.iter() {
                assert!((to == s) == (v < 0.0), "row {s}, column {to}: {v}");
            }
            // One arrival (none in the all-full state) and one departure per busy queue.
            let busy = (0..n).filter(|&i| p.length(s, i) > 0).count();
            let full = s == q.rows() - 1;
            assert_eq!(row.nnz(), 1 + busy + usize::from(!full), "row {s}");
        }
    }
}

#[test]
fn an_arrival_goes_to_the_first_queue_under_the_threshold() {
    // 3 queues, threshold 2: (2, 2, 1) -> (2, 2, 2); (2, 0, 1) -> (2, 1, 1).
    let p = model(3, 2, 1.0, 1.0);
    let q = generator(&p).unwrap();
    let s = |a: [usize; 3]| a[0] + 3 * a[1] + 9 * a[2];
    assert_eq!(q.get(s([2, 2, 1]), s([2, 2, 2])), Some(&1.0));
    assert_eq!(q.get(s([2, 0, 1]), s([2, 1, 1])), Some(&1.0));
    assert_eq!(
        q.get(s([2, 0, 1]), s([2, 0, 2])),
        None,
        "no arrival past a free queue"
    );
    assert_eq!(q.get(s([0, 0, 0]), s([0, 1, 0])), None);
}

#[test]
fn the_two_by_two_model_matches_the_papers_balance_equations() {
    // Eq. 11 with a = λ/μ: p11 = a² p00 / 2, p01 = p11 / (1 + a), p10 = a p00 − p01.
    for (lambda, mu) in [(0.5, 1.0), (1.0, 1.0), (3.0, 2.0)] {
        let a: f64 = lambda / mu;
        let p11 = a * a / 2.0;
        let p01 = p11 / (1.0 + a);
        let p10 = a - p01;
        let total = 1.0 + p10 + p01 + p11;
        let sol = solve(&model(2, 1, lambda, mu)).unwrap();
        assert!(
            close(sol.loss, p11 / total, 1e-9),
            "{} vs {}",
            sol.loss,
            p11 / total
        );
        let q0 = sol.per_queue[0];
        let q1 = sol.per_queue[1];
        assert!(close(q0.utilization, (p10 + p11) / total, 1e-9));
        assert!(close(q1.utilization, (p01 + p11) / total, 1e-9));
        assert!(
            close(q0.mean_length, q0.utilization, 1e-12),
            "T = 1: length = busy"
        );
    }
}

/// The textbook M/M/1/K: `L = ρ/(1−ρ) − (K+1) ρ^{K+1} / (1 − ρ^{K+1})`,
/// loss `(1−ρ) ρ^K / (1 − ρ^{K+1})` (ρ ≠ 1); `L = K/2`, loss `1/(K+1)` at ρ = 1.
fn textbook(rho: f64, k: usize) -> (f64, f64) {
    if (rho - 1.0).abs() < 1e-15 {
        return (k as f64 / 2.0, 1.0 / (k as f64 + 1.0));
    }
    let rk1 = rho.powi(k as i32 + 1);
    let l = rho / (1.0 - rho) - (k as f64 + 1.0) * rk1 / (1.0 - rk1);
    (l, (1.0 - rho) * rho.powi(k as i32) / (1.0 - rk1))
}

#[test]
fn one_queue_is_the_mm1k_queue_of_the_textbook() {
    for k in [1, 2, 5, 10, 40] {
        for rho in [0.1, 0.5, 0.9, 1.0, 1.3, 4.0] {
            let (l, loss) = textbook(rho, k);
            let sol = solve(&model(1, k, rho * 2.0, 2.0)).unwrap();
            assert!(
                close(sol.loss, loss, 1e-8),
                "K {k} rho {rho}: {} vs {loss}",
                sol.loss
            );
            let got = sol.per_queue[0].mean_length;
            assert!(close(got, l, 1e-8), "K {k} rho {rho}: {got} vs {l}");
            let mm1 = mm1_drop(rho * 2.0, 2.0, k).unwrap();
            assert!(close(mm1.loss, loss, 1e-10) && close(mm1.mean_length, l, 1e-10));
            assert!(close(mm1.utilization, 1.0 - textbook_p0(rho, k), 1e-10));
        }
    }
}

fn textbook_p0(rho: f64, k: usize) -> f64 {
    if (rho - 1.0).abs() < 1e-15 {
        return 1.0 / (k as f64 + 1.0);
    }
    (1.0 - rho) / (1.0 - rho.powi(k as i32 + 1))
}

/// π from a dense Gaussian elimination of `πQ = 0` with the last equation replaced by `Σπ = 1`.
fn dense_steady_state(p: &Bypass) -> Vec<f64> {
    let q = generator(p).unwrap().to_dense();
    let n = q.nrows();
    // Rows of A: the balance equation of each state j (column j of Q), the last one Σπ = 1.
    let mut a: Vec<Vec<f64>> = (0..n)
        .map(|j| {
            let mut row: Vec<f64> = (0..n).map(|i| q[[i, j]]).collect();
            row.push(0.0);
            row
        })
        .collect();
    a[n - 1] = vec![1.0; n + 1];
    for c in 0..n {
        let piv = (c..n)
            .max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))
            .unwrap();
        a.swap(c, piv);
        let pivot = a[c].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                for (x, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                    *x -= f * p;
                }
            }
        }
    }
    (0..n).map(|i| a[i][n] / a[i][i]).collect()
}

#[test]
fn the_sparse_solution_matches_a_dense_solve() {
    for (n, t, lambda) in [(3, 2, 1.5), (2, 4, 2.5), (4, 1, 0.7), (3, 3, 6.0)] {
        let p = model(n, t, lambda, 1.0);
        let pi = dense_steady_state(&p);
        let sol = solve(&p).unwrap();
        assert!(close(sol.loss, pi[pi.len() - 1], 1e-8));
        for i in 0..n {
            let len: f64 = pi
                .iter()
                .enumerate()
                .map(|(s, x)| p.length(s, i) as f64 * x)
                .sum();
            assert!(
                close(sol.per_queue[i].mean_length, len, 1e-8),
                "{n}x{t} q{i}"
            );
        }
        assert!(sol.residual <= DEFAULT_TOLERANCE);
    }
}

#[test]
fn what_is_not_lost_is_served() {
    // Flow balance: λ (1 − loss) = μ Σ utilization.
    for (n, t, lambda, mu) in [(2, 3, 1.0, 1.0), (3, 2, 4.0, 1.5), (5, 2, 2.0, 1.0)] {
        let sol = solve(&model(n, t, lambda, mu)).unwrap();
        let served: f64 = sol.per_queue.iter().map(|q| mu * q.utilization).sum();
        assert!(close(lambda * (1.0 - sol.loss), served, 1e-9));
        assert!(close(sol.utilization() * n as f64 * mu, served, 1e-12));
    }
}

#[test]
fn more_queues_lose_less_and_a_higher_priority_queue_is_busier() {
    let mut last = 1.0;
    for n in 1..=5 {
        let sol = solve(&model(n, 2, 3.0, 1.0)).unwrap();
        assert!(sol.loss < last, "{n} queues: {} !< {last}", sol.loss);
        last = sol.loss;
        for w in sol.per_queue.windows(2) {
            assert!(w[0].utilization > w[1].utilization);
        }
    }
}

#[test]
fn the_five_by_eight_model_has_32768_states_and_converges() {
    let sol = solve(&model(5, 7, 4.0, 1.0)).unwrap();
    assert_eq!(sol.states, 32_768);
    assert!(sol.residual <= DEFAULT_TOLERANCE && sol.sweeps < MAX_SWEEPS);
}

#[test]
fn bad_parameters_are_refused() {
    assert_eq!(model(0, 2, 1.0, 1.0).states(), Err(BypassError::NoQueue));
    assert_eq!(
        model(2, 0, 1.0, 1.0).states(),
        Err(BypassError::ZeroThreshold)
    );
    assert_eq!(
        model(2, 2, 0.0, 1.0).states(),
        Err(BypassError::BadRate(0.0))
    );
    assert!(matches!(
        model(2, 2, 1.0, f64::NAN).states(),
        Err(BypassError::BadRate(_))
    ));
    assert_eq!(
        model(23, 1, 1.0, 1.0).states(),
        Err(BypassError::TooManyStates {
            queues: 23,
            threshold: 1
        })
    );
    assert!(model(64, usize::MAX, 1.0, 1.0).states().is_err());
    assert!(mm1_drop(1.0, 1.0, 0).is_err());
    assert_eq!(model(22, 1, 1.0, 1.0).states(), Ok(MAX_STATES));
}
