//! Rules for recurrent networks and image operators.
