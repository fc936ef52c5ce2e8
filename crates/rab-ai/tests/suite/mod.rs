mod conformance;
mod faults;
mod harness;
mod live;
mod request_shape;
mod streaming;
