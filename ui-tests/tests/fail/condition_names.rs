// Strings the API server would reject, reported at the offending token.
#[kubeward::condition(type = "Up To Date")]
#[transitions(_Starting -> Ready)]
pub enum UpToDate {
    #[reason(Unknown, initial)]
    _Starting,
    #[reason(True)]
    Ready,
    #[reason(False, initial)]
    AReasonLongerThanOneHundredAndTwentyEightBytesIsAcceptedByConditionsButRejectedAsAnEventReasonByTheEventsApiSoKubewardRejectsItAtCompileTime,
}

#[kubeward::condition]
#[transitions(Absent -> Present)]
pub enum Reserved {
    #[reason(Unknown)]
    Absent,
    #[reason(True)]
    Present,
}

fn main() {}
