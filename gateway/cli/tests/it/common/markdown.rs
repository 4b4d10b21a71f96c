//! Reading the commands out of a Markdown document, for the tests that run a
//! document's commands as written.

/// The bodies of the `sh` code blocks in the section of `doc` whose `## `
/// heading starts with `heading`, up to the next `## ` heading.
pub fn sh_blocks(doc: &str, heading: &str) -> Vec<String> {
    let start = doc
        .find(&format!("\n## {heading}"))
        .unwrap_or_else(|| panic!("no section whose heading starts with {heading:?}"))
        + 1;
    let section = &doc[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let mut blocks = Vec::new();
    let mut rest = section;
    while let Some(open) = rest.find("```sh\n") {
        let body = &rest[open + 6..];
        let close = body.find("\n```").expect("an unclosed code block");
        blocks.push(body[..close].to_owned());
        rest = &body[close + 4..];
    }
    blocks
}
