// ParleyMedia: placeholder until it lands (issue 3).
