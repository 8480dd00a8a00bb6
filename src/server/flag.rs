//! The flags only some models honour: each model declares the ones it does, and `serve`
//! refuses the others for it.

/// A model-specific flag; a model declares the ones it honours and the others are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// `--trigger level|edge`.
    Trigger,
    /// `--accept all|exclusive|mutex`.
    Accept,
    /// `--batch-wait DUR`.
    BatchWait,
    /// `--offload-over DUR`.
    OffloadOver,
    /// `--reserve under=DUR:K`.
    Reserve,
    /// `--green-slice DUR`.
    GreenSlice,
}

impl Flag {
    /// The flag as typed.
    pub fn name(self) -> &'static str {
        match self {
            Flag::Trigger => "--trigger",
            Flag::Accept => "--accept",
            Flag::BatchWait => "--batch-wait",
            Flag::OffloadOver => "--offload-over",
            Flag::Reserve => "--reserve",
            Flag::GreenSlice => "--green-slice",
        }
    }

    /// What a model that does not honour it lacks, as its refusal says.
    pub fn lacking(self) -> &'static str {
        match self {
            Flag::Trigger => "it does not use epoll's trigger modes",
            Flag::Accept => "its workers do not share one listener through epoll",
            Flag::BatchWait => "it does not wait on io_uring completions",
            Flag::OffloadOver => "it has no pool to hand work to",
            Flag::Reserve => "it has no pool whose workers could be reserved",
            Flag::GreenSlice => "it runs no green threads",
        }
    }
}
