// Request/reply payloads of the jobs service; filled in by the jobs issue.
export interface JobsRequests {}
