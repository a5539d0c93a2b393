//! The platform's HTML: the course page that frames the tool, and the self-submitting forms
//! that carry the browser through login initiation and the launch.

/// The course page: a heading and the tool in an iframe, which starts the launch.
pub(super) fn course_page(course_title: &str) -> String {
    let title = escape(course_title);
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{title} - LMS</title></head>
<body>
<h1>{title}</h1>
<p>GPU lab (external tool)</p>
<iframe name="tool" src="/launch-frame" width="100%" height="600" allow="fullscreen *; clipboard-read *; clipboard-write *"></iframe>
</body>
</html>
"#
    )
}

/// A page that POSTs `fields` to `action` as soon as it loads, in the same browsing context
/// (the iframe, when framed), with a button for browsers without scripts.
pub(super) fn auto_post(title: &str, action: &str, fields: &[(&str, &str)]) -> String {
    let inputs: String = fields
        .iter()
        .map(|(name, value)| format!(r#"<input type="hidden" name="{}" value="{}">"#, escape(name), escape(value)) + "\n")
        .collect();
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{title}</title></head>
<body>
<form method="post" action="{action}" target="_self">
{inputs}<noscript><button type="submit">Continue</button></noscript>
</form>
<script>document.forms[0].submit()</script>
</body>
</html>
"#,
        title = escape(title),
        action = escape(action),
    )
}

/// HTML text and attribute escaping.
pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
