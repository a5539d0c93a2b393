//! What every page must pass at the smallest phone's width, a common phone's and a
//! desktop's: nothing wider than the window, no WCAG 2 A/AA violation that axe-core finds,
//! and a screenshot to look at.

use std::time::Duration;

use crate::{workspace_root, Browser};

/// axe-core, fetched by `scripts/setup.sh --test` (never kept in the repository).
fn axe_source() -> String {
    let path = workspace_root().join("target/axe/axe.min.js");
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/setup.sh --test to fetch axe-core",
            path.display()
        )
    })
}

/// The smallest phones (320), a common phone (390) and a desktop.
pub const WIDTHS: [u32; 3] = [320, 390, 1280];

impl Browser {
    /// At each of [`WIDTHS`]: the page is no wider than the window, axe finds nothing,
    /// and `NAME-WIDTH.png` is saved. Ends at the desktop width.
    pub async fn check_page(&self, name: &str) {
        let mut problems = Vec::new();
        for width in WIDTHS {
            self.client
                .set_window_size(width, 1400)
                .await
                .expect("window size");
            tokio::time::sleep(Duration::from_millis(300)).await;
            let (scroll, inner) = self.widths().await;
            if width < 400 {
                assert!(inner <= width as i64 + 10, "the window is {inner} px wide, not {width}");
            }
            if scroll > inner {
                problems.push(format!("{width} px: the page is {scroll} px wide, wider than the {inner} px window ({})", self.widest().await));
            }
            problems.extend(
                self.axe()
                    .await
                    .into_iter()
                    .map(|v| format!("{width} px: {v}")),
            );
            self.screenshot(&format!("{name}-{width}")).await;
        }
        assert!(problems.is_empty(), "{name}:\n{}", problems.join("\n"));
    }

    async fn widths(&self) -> (i64, i64) {
        let value = self
            .client
            .execute(
                "return [document.documentElement.scrollWidth, window.innerWidth];",
                vec![],
            )
            .await
            .expect("measuring the page");
        let pair = value.as_array().expect("two numbers");
        (pair[0].as_i64().unwrap_or(0), pair[1].as_i64().unwrap_or(0))
    }

    /// The elements that stick out past the window's right edge, to say what to fix.
    async fn widest(&self) -> String {
        let value = self
            .client
            .execute(
                "const w = window.innerWidth; return Array.from(document.querySelectorAll('body *'))
                   .filter(e => e.getBoundingClientRect().right > w + 1)
                   .slice(0, 5).map(e => e.tagName.toLowerCase() + '.' + e.className).join(', ');",
                vec![],
            )
            .await
            .unwrap_or_default();
        value.as_str().unwrap_or_default().to_string()
    }

    /// WCAG 2 A and AA violations on the page as it is now, one line each.
    pub async fn axe(&self) -> Vec<String> {
        let loaded = self
            .client
            .execute("return typeof window.axe === 'object';", vec![])
            .await
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        if !loaded {
            self.client
                .execute(&axe_source(), vec![])
                .await
                .expect("loading axe-core");
        }
        let result = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, {runOnly: ['wcag2a', 'wcag2aa']})
                   .then(r => done(r.violations.map(v => v.id + ' (' + v.impact + '): ' + v.help + ' — ' +
                       v.nodes.slice(0, 4).map(n => n.target.join(' ') + ' [' + (n.failureSummary || '').replace(/\\s+/g, ' ') + ']').join('; '))))
                   .catch(e => done(['axe failed: ' + e]));",
                vec![],
            )
            .await
            .expect("running axe-core");
        result
            .as_array()
            .map(|list| {
                list.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }
}
