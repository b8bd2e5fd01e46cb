//! Response bodies: wire types built from committed games, separate from rows and rules
//! types so that nothing reaches a client by accident.

pub mod cards;
pub mod events;
pub mod game;
pub mod lists;
pub mod replay;
pub mod rules;
pub mod schema;
