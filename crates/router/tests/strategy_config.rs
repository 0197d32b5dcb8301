//! `[[strategy]]` entries with NFD strategy parameters: a running router lists them in
//! `strategy-choice/list` as management would, and a reload changing only the parameters
//! applies them.

use client::control::Controller;
use client::transport::TransportUri;
use client::Face;
use router::{Config, Router};
use wire::Name;

fn config(dir: &std::path::Path, asf_ms: u32) -> Config {
    let text = format!(
        "[listen]\nunix = \"{}\"\ntcp = \"\"\nudp = \"\"\nwebsocket = \"\"\n\
         [http]\nlisten = \"\"\n\
         [[strategy]]\nprefix = \"/br\"\n\
         strategy = \"/localhost/nfd/strategy/best-route/v=5/retx-suppression-initial~20\"\n\
         [[strategy]]\nprefix = \"/asf\"\nstrategy = \"asf/v=5/probing-interval~{asf_ms}\"\n",
        dir.join("r.sock").display()
    );
    Config::from_toml(&text).unwrap()
}

/// `strategy-choice/list` of `r`: (prefix, instance name) of `prefix`.
fn listed(r: &Router, prefix: &str) -> String {
    let uri = TransportUri::Unix(r.bound().unix.clone().unwrap());
    let mut face = Face::connect(&uri).unwrap();
    let choices = Controller::new(&mut face).strategy_choices().unwrap();
    let want = Name::from_uri(prefix).unwrap();
    let c = choices.iter().find(|c| c.name == want).unwrap();
    c.strategy.to_string()
}

#[test]
fn configured_strategy_parameters_are_listed_and_a_reload_changes_them() {
    let dir = std::env::temp_dir().join(format!("cascade-strategy-cfg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut r = Router::start(&config(&dir, 30_000)).unwrap();
    let br = "/localhost/nfd/strategy/best-route/v=5/retx-suppression-initial~20";
    assert_eq!(listed(&r, "/br"), br);
    let asf = |ms: u32| format!("/localhost/nfd/strategy/asf/v=5/probing-interval~{ms}");
    assert_eq!(listed(&r, "/asf"), asf(30_000));

    let done = r.reload(&config(&dir, 5_000)).unwrap();
    assert_eq!(done.strategies_set, 1, "only /asf changed");
    assert_eq!(listed(&r, "/asf"), asf(5_000));
    assert_eq!(listed(&r, "/br"), br);

    // A bad parameter is refused at load, naming the entry.
    let text = "[[strategy]]\nprefix = \"/asf\"\nstrategy = \"asf/v=5/probing-interval~10\"\n";
    let e = Config::from_toml(text).unwrap_err().to_string();
    assert!(e.starts_with("strategy /asf: "), "{e}");
    assert!(e.contains("Probing interval must be >= 1000"), "{e}");
    r.stop_handle().stop();
    r.join();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `[[authorize]]` on a reload: a module the new entries no longer grant refuses commands
/// (403) from then on, and granting it again lets them in.
#[test]
fn a_reload_applies_new_authorizations() {
    use client::control::Controller;
    let dir = std::env::temp_dir().join(format!("cascade-auth-reload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let with = |privileges: &str| {
        let mut c = config(&dir, 30_000);
        let text = format!("[[authorize]]\ncertfile = \"any\"\nprivileges = [{privileges}]\n");
        c.authorizations = Config::from_toml(&text).unwrap().authorizations;
        c
    };
    let mut r = Router::start(&config(&dir, 30_000)).unwrap();
    let uri = TransportUri::Unix(r.bound().unix.clone().unwrap());
    let cs_config = || {
        let mut face = Face::connect(&uri).unwrap();
        let params = wire::nfd::ControlParameters::default();
        Controller::new(&mut face)
            .command_response("cs", "config", &params)
            .unwrap()
            .status_code
    };
    assert_eq!(cs_config(), 200, "the default grants every module");

    let done = r.reload(&with("\"faces\", \"strategy-choice\"")).unwrap();
    assert!(done.authorizations_applied);
    assert_eq!(cs_config(), 403, "cs is no longer granted");

    let done = r.reload(&with("\"faces\", \"strategy-choice\"")).unwrap();
    assert!(
        !done.authorizations_applied,
        "unchanged entries are not applied again"
    );
    assert_eq!(cs_config(), 403);

    let done = r.reload(&with("\"cs\"")).unwrap();
    assert!(done.authorizations_applied);
    assert_eq!(cs_config(), 200);
    r.stop_handle().stop();
    r.join();
    let _ = std::fs::remove_dir_all(&dir);
}
