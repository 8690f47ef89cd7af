namespace lockstep {}
