//! The integration tests of `bench`: one binary, one module per topic.


mod idle_replay;
mod optimum;
