//! The real `docker-registry` the tests push charts to (`testkit::registry`).

#[allow(unused_imports)]
pub use testkit::registry::{free_port, Registry};
