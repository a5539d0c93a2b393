//! Classroom traces: students arrive during a lab, hold a MIG slice for a while, some come
//! back for a second session.

use slicehub_mig::Catalog;

use crate::rng::Rng;

/// A slice size by geometry, so one trace runs on every model (`1g` is `1g.10gb` on H100).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    G1,
    G2,
    G3,
    G4,
    G7,
}

impl Class {
    /// The catalog's profile with this geometry (never a `+me` variant).
    pub fn profile_name(self, catalog: &Catalog) -> Option<String> {
        let (compute, memory) = match self {
            Class::G1 => (1, 1),
            Class::G2 => (2, 2),
            Class::G3 => (3, 4),
            Class::G4 => (4, 4),
            Class::G7 => (7, 8),
        };
        catalog
            .profiles()
            .iter()
            .find(|p| {
                p.compute_slices == compute && p.memory_slices == memory && !p.media_extensions
            })
            .map(|p| p.name.clone())
    }
}

/// One session request. Times in seconds from the start of the lab; it holds its slice
/// during [arrival, departure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub arrival: u32,
    pub departure: u32,
    pub class: Class,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mix {
    /// 50% 1g, 25% 2g, 15% 3g, 5% 4g, 5% 7g.
    Mixed,
    /// Every request is 1g.
    All1g,
}

#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub students: usize,
    pub lab_minutes: u32,
    pub session_minutes: (u32, u32),
    pub mix: Mix,
}

impl Spec {
    /// 40 students over a 3-hour lab, sessions of 20–90 minutes.
    pub fn lab(mix: Mix) -> Spec {
        Spec {
            students: 40,
            lab_minutes: 180,
            session_minutes: (20, 90),
            mix,
        }
    }

    /// A 12-student, 1-hour tutorial with 10–40 minute sessions: small enough for the
    /// exact optimum.
    pub fn tutorial(mix: Mix) -> Spec {
        Spec {
            students: 12,
            lab_minutes: 60,
            session_minutes: (10, 40),
            mix,
        }
    }
}

/// Requests sorted by arrival. Most students arrive in the first 10 minutes, the rest
/// during the first two thirds of the lab; half of those who leave early come back after a
/// 5–30 minute break with a new request.
pub fn classroom(spec: Spec, seed: u64) -> Vec<Request> {
    let mut rng = Rng::new(seed);
    let lab = spec.lab_minutes * 60;
    let mut requests = Vec::new();
    for _ in 0..spec.students {
        let mut arrival = if rng.unit() < 0.6 {
            rng.between(0, 600)
        } else {
            rng.between(0, lab * 2 / 3)
        };
        loop {
            let class = pick(&mut rng, spec.mix);
            let length = rng.between(spec.session_minutes.0 * 60, spec.session_minutes.1 * 60);
            let departure = (arrival + length).min(lab);
            requests.push(Request {
                arrival,
                departure,
                class,
            });
            let back = departure + rng.between(300, 1800);
            if rng.unit() < 0.5 && back + 900 < lab {
                arrival = back;
            } else {
                break;
            }
        }
    }
    requests.sort_by_key(|r| (r.arrival, r.departure));
    requests
}

fn pick(rng: &mut Rng, mix: Mix) -> Class {
    match mix {
        Mix::All1g => Class::G1,
        Mix::Mixed => {
            let x = rng.unit();
            if x < 0.50 {
                Class::G1
            } else if x < 0.75 {
                Class::G2
            } else if x < 0.90 {
                Class::G3
            } else if x < 0.95 {
                Class::G4
            } else {
                Class::G7
            }
        }
    }
}
