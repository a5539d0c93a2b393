//! `/api/v1/docs`: the OpenAPI document as a page a person reads, rendered here from the
//! document itself (no script, nothing fetched from elsewhere): each route with its
//! method, the scope its token needs, what it does, its parameters and answers.

use std::fmt::Write as _;

use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::{OpenApi, RefOr};

use crate::proxy::pages::escape;

const METHODS: [&str; 4] = ["get", "post", "put", "delete"];

fn operations(doc: &OpenApi) -> Vec<(String, &'static str, &Operation)> {
    let mut out = Vec::new();
    for (path, item) in &doc.paths.paths {
        for method in METHODS {
            let op = match method {
                "get" => item.get.as_ref(),
                "post" => item.post.as_ref(),
                "put" => item.put.as_ref(),
                _ => item.delete.as_ref(),
            };
            if let Some(op) = op {
                out.push((path.clone(), method, op));
            }
        }
    }
    out
}

fn scope_of(op: &Operation) -> String {
    let json = serde_json::to_value(&op.security).unwrap_or_default();
    let scopes: Vec<String> = json
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|req| req.get("token"))
        .filter_map(|s| s.as_array())
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect();
    if scopes.is_empty() {
        "any".to_string()
    } else {
        scopes.join(", ")
    }
}

fn params_of(op: &Operation) -> String {
    let names: Vec<String> = op
        .parameters
        .iter()
        .flatten()
        .filter_map(|p| match p {
            RefOr::T(p) => Some(p),
            RefOr::Ref(_) => None,
        })
        .map(|p| {
            let place = match p.parameter_in {
                ParameterIn::Path => "path",
                ParameterIn::Query | ParameterIn::QueryString => "query",
                ParameterIn::Header => "header",
                ParameterIn::Cookie => "cookie",
            };
            format!("<code>{}</code> ({place})", escape(&p.name))
        })
        .collect();
    names.join(", ")
}

fn body_of(op: &Operation) -> String {
    let Some(RefOr::T(body)) = &op.request_body else {
        return String::new();
    };
    body.content
        .iter()
        .map(|(kind, content)| match content {
            RefOr::T(utoipa::openapi::Content { schema: Some(RefOr::Ref(r)), .. }) => format!("{} <code>{}</code>", escape(kind), escape(r.ref_location.rsplit('/').next().unwrap_or(""))),
            _ => escape(kind),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn answers_of(op: &Operation) -> String {
    op.responses
        .responses
        .keys()
        .map(|code| format!("<code>{}</code>", escape(code)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Escaped text with its `code` spans set as code.
fn prose(text: &str) -> String {
    escape(text)
        .split('`')
        .enumerate()
        .map(|(i, part)| if i % 2 == 1 { format!("<code>{part}</code>") } else { part.to_string() })
        .collect()
}

pub fn render(doc: &OpenApi) -> String {
    let ops = operations(doc);
    let mut sections = String::new();
    for tag in doc.tags.iter().flatten() {
        let mut rows = String::new();
        for (path, method, op) in ops.iter().filter(|(_, _, op)| op.tags.iter().flatten().any(|t| *t == tag.name)) {
            let what = [op.summary.as_deref(), op.description.as_deref()]
                .into_iter()
                .flatten()
                .map(prose)
                .collect::<Vec<_>>()
                .join(" ");
            let extra = [("Parameters", params_of(op)), ("Body", body_of(op)), ("Answers", answers_of(op))]
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| format!("<br><span class=\"muted\">{k}:</span> {v}"))
                .collect::<String>();
            let _ = write!(
                rows,
                "<tr><td><code>{}</code></td><td><code>/api/v1{}</code></td><td>{}</td><td>{what}{extra}</td></tr>",
                method.to_uppercase(),
                escape(path),
                escape(&scope_of(op)),
            );
        }
        let _ = write!(
            sections,
            "<section class=\"card\" id=\"{name}\"><h2 class=\"card-title\">{name}</h2><p class=\"muted\">{desc}</p>\
             <div class=\"table-wrap\"><table class=\"table\"><thead><tr><th>Method</th><th>Path</th><th>Scope</th><th>What it does</th></tr></thead>\
             <tbody>{rows}</tbody></table></div></section>",
            name = escape(&tag.name),
            desc = prose(tag.description.as_deref().unwrap_or("")),
        );
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>API · SliceHub</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <link rel=\"stylesheet\" href=\"/pkg/slicehub.css\"></head>\
         <body><main class=\"page api-docs\"><h1 class=\"page-title\">SliceHub API, version {version}</h1>\
         <p>{description}</p>\
         <p><a class=\"btn btn-secondary\" href=\"/api/v1/openapi.json\">The OpenAPI 3.1 document</a> \
         <a class=\"btn btn-secondary\" href=\"/account\">Make a token on your account page</a></p>\
         {sections}</main></body></html>",
        version = escape(&doc.info.version),
        description = prose(doc.info.description.as_deref().unwrap_or("")),
    )
}
